// What a transaction can tell the gateway once it commits (notices.ts records them on the
// transaction; db/tx/outlets.ts hands them to the gateway).
import type { AgentSnapshot, Message } from '../db/entities/index.ts';
import type { InboxChange } from '../contracts/operator-events.ts';

/**
 * What one node tells all nodes (itself included) about a conversation, or (`deliveries`) that
 * the delivery outcomes of some Services were committed, which only the dashboard listens to.
 */
export type Notice =
  | {
      kind: 'message';
      userId: number;
      messageId: number;
      prevId: number | null;
      /** The row as written, for this node's sockets; other nodes get the ids only. */
      message?: Message;
    }
  | { kind: 'agent'; userId: number; agent: AgentSnapshot | null }
  | {
      kind: 'agentTyping';
      userId: number;
      agent: AgentSnapshot;
      isTyping: boolean;
      /** While typing, the Unix time in seconds until which it lasts (the agent object's `isTyping`); else null. */
      typingUntil: number | null;
    }
  | { kind: 'messageStatus'; userId: number; messages: Array<{ id: number; status: number }> }
  | { kind: 'merged'; fromUserId: number; toUserId: number }
  | { kind: 'deliveries'; serviceIds: number[] }
  /**
   * The team's side of a conversation changed (its owner, its assignee or status, a note): only
   * the dashboard's channel hears of it. This is how the inbox, which has no webhook, learns of a
   * changeOwner naming it (docs/dashboard.md).
   */
  | { kind: 'inbox'; userId: number; change: InboxChange };

export type { InboxChange };

/**
 * Notices about callers rather than a conversation: the device (its id) left the user for
 * another customer, so its sockets identify their caller again; users were erased (GDPR) with
 * their devices, so their sockets are told and disconnected; an account, its Services or their
 * API keys changed, so every node reads that account's Service API keys afresh; an operator
 * signed out, was disabled or had their grants replaced, so every node checks that operator's
 * dashboard sockets again (ended, or moved to the rooms the grants now allow).
 */
export type CallerNotice =
  | { kind: 'deviceMoved'; userId: number; deviceId: number }
  | { kind: 'erased'; userIds: number[] }
  | { kind: 'account'; accountId: number }
  | { kind: 'operator'; operatorId: number };

/** The notice of an operator whose sessions, grants or state changed. */
export type OperatorNotice = Extract<CallerNotice, { kind: 'operator' }>;

/** Everything a transaction can tell the gateway. */
export type AnyNotice = Notice | CallerNotice;
