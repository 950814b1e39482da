// Erasure of a user (GDPR, DELETE /adminApi/accounts/{accountId}/users/{userId}): the user and
// everything of theirs — messages, uploads (rows here, bytes by the caller once committed),
// devices, contact details (on the user row), every delivery about them, emails included
// (pending ones must not go out; delivered and dead ones hold their messages in the log), and the
// team's side of the conversation (its state, and its timeline lines: private notes about the
// customer are personal data too). Anonymous users merged into them go too: their rows are
// tombstones pointing at this user. Under the users' row locks, like every conversation change;
// once committed, every node disconnects the erased users' sockets (the `erased` notice).
import { transaction } from '../db/tx/run.ts';
import { recordNote } from '../audit/entries.ts';
import type { AuditNote } from '../audit/context.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pgIntArray } from '../db/pg-arrays.ts';
import { notify } from './notices.ts';
import { lockUsers } from './users.ts';

export interface Erased {
  userIds: number[];
  messages: number;
  devices: number;
  deliveries: number;
  /** The conversation's timeline lines (notes, status and assignee changes). */
  timelineLines: number;
  /** Storage paths of the erased uploads, to delete once the transaction committed. */
  media: string[];
}

export async function eraseUser(em: EntityManager, accountId: number, userId: number, audit?: AuditNote): Promise<Erased | null> {
  return transaction(em, async (tx) => {
    const connection = tx.em.getConnection();
    const context: unknown = tx.em.getTransactionContext();
    const run = <T extends object[]>(sql: string, params: unknown[]) => connection.execute<T>(sql, params, 'all', context);
    const tombstones = await run<Array<{ id: number }>>('select id from users where merged_into_user_id = ? and account_id = ?', [
      userId,
      accountId,
    ]);
    const ids = [userId, ...tombstones.map((t) => t.id)];
    const locked = await lockUsers(tx.em, ids);
    if (locked.get(userId)?.accountId !== accountId) return null;
    const all = pgIntArray(ids);
    const media = await run<Array<{ path: string }>>('delete from media where user_id = any(?::int[]) returning path', [all]);
    const messages = await run<Array<{ id: number }>>('delete from messages where user_id = any(?::int[]) returning id', [all]);
    const devices = await run<Array<{ id: number }>>('delete from devices where user_id = any(?::int[]) returning id', [all]);
    // Locked in id order first, the order in which the worker holds the rows whose attempts it
    // logs (sql/attempts-log.ts): an erasure and an outcome batch wait for each other, never in a cycle.
    const deliveries = await run<Array<{ id: string }>>(
      `with mine as (select id from deliveries where (ordering_key = any(?::int[])
                       and service_id in (select id from services where account_id = ?)) or user_id = any(?::int[])
                      order by id for update)
       delete from deliveries where id in (select id from mine) returning id`,
      [all, accountId, all],
    );
    // The foreign keys would cascade; deleted by name so that no future change to them keeps a note.
    const timelineLines = await run<Array<{ id: string }>>('delete from conversation_events where user_id = any(?::int[]) returning id', [
      all,
    ]);
    await run<object[]>('delete from conversation_states where user_id = any(?::int[])', [all]);
    // Tombstones first: they refer to the user.
    await run<object[]>('delete from users where id = any(?::int[]) and id <> ?', [all, userId]);
    await run<object[]>('delete from users where id = ?', [userId]);
    // Their devices are gone: open sockets of these users could only fail from here on.
    notify(tx, { kind: 'erased', userIds: ids });
    await recordNote(tx.em, audit, { accountId, target: { userId } });
    return {
      userIds: ids,
      messages: messages.length,
      devices: devices.length,
      deliveries: deliveries.length,
      timelineLines: timelineLines.length,
      media: media.map((m) => m.path),
    };
  });
}
