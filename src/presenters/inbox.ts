import type { User } from '../db/entities/index.ts';
import { effectiveStatus, type ConversationState, type TimelineEvent } from '../conversations/inbox.ts';
import type { CannedReply } from '../tenancy/canned-replies.ts';
import { presentUserSummary } from './service-user.ts';

/** The team's side of a conversation, as the dashboard reads it (never a client, webhook or push). */
export function presentConversationState(state: ConversationState) {
  return {
    userId: state.userId,
    ownerServiceId: state.ownerServiceId,
    /** A snooze whose time has passed reads open. */
    status: effectiveStatus(state),
    snoozedUntil: state.status === 'snoozed' ? (state.snoozedUntil?.toISOString() ?? null) : null,
    assigneeId: state.assigneeId,
    waitingSince: state.waitingSince?.toISOString() ?? null,
    readMessageId: state.readMessageId,
    updatedAt: state.updatedAt.toISOString(),
  };
}

/** A line of the conversation's timeline: a private note, a status or an assignee change (who, when). */
export function presentTimelineEvent(event: TimelineEvent) {
  return {
    id: event.id,
    userId: event.userId,
    operatorId: event.operatorId,
    kind: event.kind,
    text: event.text,
    data: event.data,
    createdAt: event.createdAt.toISOString(),
  };
}

/** A conversation in one of the inbox's views. */
export function presentInboxRow(user: User, state: ConversationState, unread: number) {
  return { user: presentUserSummary(user), state: presentConversationState(state), unread };
}

export function presentCannedReply(reply: CannedReply) {
  return {
    id: reply.id,
    accountId: reply.accountId,
    shortcut: reply.shortcut,
    text: reply.text,
    createdAt: reply.createdAt.toISOString(),
    updatedAt: reply.updatedAt.toISOString(),
  };
}
