// What the operators' live channel (Socket.IO namespace /operators) sends: realtime/operators.ts
// emits these, the dashboard (web/dashboard/src/live.ts) listens to them. They name what changed,
// never its content: the dashboard reads that over the Admin API, which applies the permissions.

/**
 * What changed on the team's side of a conversation; or, when the inbox owns it, the customer's
 * typing and chat opened (what a Service would get as webhook events), nothing stored.
 */
export type InboxChange = 'owner' | 'assignee' | 'status' | 'note' | 'startTyping' | 'stopTyping' | 'chatOpened';

export interface ConversationChange {
  accountId: number;
  userId: number;
  /** InboxChange: the owner, assignee or status changed, a note was written, or the customer types or opened the chat while the inbox owns it (only the dashboard hears of these). */
  change: 'message' | 'agent' | 'messageStatus' | 'merged' | InboxChange;
}

/** Delivery outcomes of these Services were committed (at most one event a second per account). */
export interface DeliveriesChange {
  accountId: number;
  serviceIds: number[];
}

/** Why a socket was ended: the code a request with its token would get now. */
export interface Ended {
  code: 'invalid_token' | 'permission_denied';
}

export interface OperatorEvents {
  conversation(change: ConversationChange): void;
  deliveries(change: DeliveriesChange): void;
  ended(reason: Ended): void;
}
