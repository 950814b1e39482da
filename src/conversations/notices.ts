// The one way a change reaches connected sockets. Whoever changes a conversation records a
// notice on the transaction that makes the change (`notify`, a field of the transaction object,
// db/tx/transaction.ts); the transaction's runner hands them, once it committed, to the gateway
// in the order they were recorded (db/tx/outlets.ts). A transaction that rolls back takes its
// notices with it, so sockets never hear of a change that did not happen, and no route or socket
// handler has to remember to publish.
import type { Message } from '../db/entities/index.ts';
import type { Transaction } from '../db/tx/transaction.ts';
import type { AnyNotice, CallerNotice, Notice, OperatorNotice } from './notice-kinds.ts';

export type { AnyNotice, CallerNotice, InboxChange, Notice, OperatorNotice } from './notice-kinds.ts';

/** Records notices on the transaction that makes the change; they go out once it commits. */
export function notify(tx: Transaction, ...notices: AnyNotice[]): void {
  tx.notices.push(...notices);
}

/** Every node reads the account's Service API keys afresh (its Services or keys changed). */
export function accountChanged(accountId: number): CallerNotice {
  return { kind: 'account', accountId };
}

/** Every node checks the operator's dashboard sockets again (signed out, disabled, grants replaced). */
export function operatorChanged(operatorId: number): OperatorNotice {
  return { kind: 'operator', operatorId };
}

/** The message notice of a written message. */
export function messageNotice(message: Message, prevId: number | null): Notice {
  return { kind: 'message', userId: message.userId, messageId: message.id, prevId, message };
}
