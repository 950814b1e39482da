// Canned replies: an account's ready answers, each with a shortcut an operator types after `/`
// in the dashboard's composer. Managed with accounts:edit, read by whoever reads conversations.
import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict, notFound } from '../errors.ts';

export interface CannedReply {
  id: number;
  accountId: number;
  shortcut: string;
  text: string;
  createdAt: Date;
  updatedAt: Date;
}

interface Row {
  id: number;
  account_id: number;
  shortcut: string;
  text: string;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS = 'id, account_id, shortcut, text, created_at, updated_at';

function replyOf(row: Row): CannedReply {
  return {
    id: row.id,
    accountId: row.account_id,
    shortcut: row.shortcut,
    text: row.text,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** A shortcut the account has already: 409 `already_exists`, as any unique-key clash. */
async function sql(em: EntityManager, text: string, params: unknown[]): Promise<Row[]> {
  try {
    return await em.getConnection().execute<Row[]>(text, params, 'all', em.getTransactionContext());
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw conflict('already_exists');
    throw err;
  }
}

/** By shortcut. */
export async function listCannedReplies(em: EntityManager, accountId: number): Promise<CannedReply[]> {
  return (await sql(em, `select ${COLUMNS} from canned_replies where account_id = ? order by shortcut, id`, [accountId])).map(replyOf);
}

/** A shortcut already taken on the account answers 409 `already_exists` (the unique key). */
export async function createCannedReply(
  em: EntityManager,
  accountId: number,
  input: { shortcut: string; text: string },
): Promise<CannedReply> {
  const [row] = await sql(em, `insert into canned_replies (account_id, shortcut, text) values (?, ?, ?) returning ${COLUMNS}`, [
    accountId,
    input.shortcut,
    input.text,
  ]);
  if (!row) throw new Error('canned reply not written');
  return replyOf(row);
}

export async function updateCannedReply(
  em: EntityManager,
  accountId: number,
  id: number,
  changes: { shortcut?: string | undefined; text?: string | undefined },
): Promise<CannedReply> {
  const [row] = await sql(
    em,
    `update canned_replies set shortcut = coalesce(?, shortcut), text = coalesce(?, text), updated_at = now()
     where id = ? and account_id = ? returning ${COLUMNS}`,
    [changes.shortcut ?? null, changes.text ?? null, id, accountId],
  );
  if (!row) throw notFound('canned_reply_not_found');
  return replyOf(row);
}

export async function deleteCannedReply(em: EntityManager, accountId: number, id: number): Promise<void> {
  const rows = await sql(em, `delete from canned_replies where id = ? and account_id = ? returning ${COLUMNS}`, [id, accountId]);
  if (rows.length === 0) throw notFound('canned_reply_not_found');
}
