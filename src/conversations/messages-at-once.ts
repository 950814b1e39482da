// Client messages in one statement, on the embedded database only. The locked way
// (messages.ts, recordUserMessages) takes two round trips a batch: the users' locks and ids,
// then the messages and deliveries, built from what the locks read. The embedded database is
// one session, so nothing else runs between a statement's snapshot and its writes, and its
// one connection is what its node runs out of (docs/performance.md): a batch holding it across
// a second round trip makes every other writer wait for the main thread's turn in between. So
// here the payloads are built from the users as their callers read them, and one statement
// checks that every sender is still as read (sql/senders-as-seen.ts), draws the ids, fills
// them into the payloads, and writes it all, with BEGIN before it and COMMIT behind it in the
// same write. If the check fails it writes nothing, and the batch goes the locked way.
//
// On a PostgreSQL server this would not hold: another transaction may commit between the
// statement's snapshot and its lock, so its reads (the previous message, a chain's pending
// delivery) could miss what that one wrote. There the locked way is the only way.
import type { Account, User } from '../db/entities/index.ts';
import { prepared } from '../db/prepared.ts';
import type { Transaction } from '../db/tx/transaction.ts';
import { deliveriesCte } from '../deliveries/outbox.ts';
import { messagePayload } from '../presenters/webhook-payloads.ts';
import { insertRows, messageOf, userMessageRow, type NewMessage, type UserMessage } from './messages.ts';
import { insertMessagesSql, MESSAGES_CTE, toInsertedMessages, type InsertMessagesRow } from './sql/insert-messages.ts';
import { sendersAsSeenSql, type SeenSender, type SentKey } from './sql/senders-as-seen.ts';

/** A message whose sender is as its caller read it: what its payload shows of the user. */
export interface SeenUserMessage extends UserMessage {
  account: Pick<Account, 'id' | 'identification'>;
  user: Pick<User, 'id' | 'ownerServiceId' | 'uniqueIdentifier' | 'additionalInformation'>;
}

/** Why a statement wrote nothing: the senders not as their callers read them, the accounts with a standby Service. */
export interface NotAtOnce {
  stale: number[];
  standby: number[];
}

/**
 * Writes the messages and their deliveries to their owners in one statement that carries the
 * COMMIT. When a sender was not as its caller read it, its account has a standby Service, or a
 * client id was sent before, it writes nothing (the transaction commits empty) and says why.
 * The caller keeps media and repeated client ids to the locked way.
 */
export async function recordUserMessagesAtOnce(tx: Transaction, messages: readonly SeenUserMessage[]): Promise<NewMessage[] | NotAtOnce> {
  if (messages.length === 0) return [];
  const rows = messages.map(userMessageRow);
  const createdAt = new Date();
  // One session: no other transaction runs until this one ends, so no chain lock has anything to exclude.
  tx.chainsLocked(messages.map(({ user }) => [user.ownerServiceId, user.id]));
  const deliveries = await deliveriesCte(
    tx,
    messages.map(({ account, user }, n) => ({
      kind: 'message' as const,
      payload: messagePayload(messageOf(rows[n] as (typeof rows)[number], 0, user.id, createdAt), account, user),
      recipients: [user.ownerServiceId],
      orderingKey: user.id,
      messageOf: n,
    })),
    MESSAGES_CTE,
  );
  const senders = new Map<number, SeenSender>();
  const keys: SentKey[] = [];
  for (const { account, user, input } of messages) {
    senders.set(user.id, {
      user_id: user.id,
      account_id: account.id,
      owner_service_id: user.ownerServiceId,
      unique_identifier: user.uniqueIdentifier ?? null,
      additional_information: user.additionalInformation ?? null,
    });
    if (input.clientMessageId != null && input.deviceId !== null) {
      keys.push({ device_id: input.deviceId, client_message_id: input.clientMessageId });
    }
  }
  const [result] = await prepared<InsertMessagesRow>(
    tx,
    insertMessagesSql({
      rows: insertRows(
        rows,
        messages.map(({ user }) => user.id),
      ),
      createdAt,
      deliveries: deliveries?.cte ?? null,
      agents: null,
      check: sendersAsSeenSql([...senders.values()], keys),
    }),
    { commit: true },
  );
  if (result?.ok !== true) return { stale: result?.stale ?? [], standby: result?.standby ?? [] };
  const { ids, deliveries: written } = toInsertedMessages(result);
  deliveries?.written(
    written,
    ids.map(([id]) => id),
  );
  return rows.map((row, i): NewMessage => {
    const [id, prevId] = ids[i] ?? [];
    if (id === undefined || prevId === undefined) throw new Error('message not inserted');
    return { message: messageOf(row, id, row.userId, createdAt), prevId };
  });
}
