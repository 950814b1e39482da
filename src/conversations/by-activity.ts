// An account's conversations in the order an operator works them: by last activity, the newest
// first. Read in one statement: each live user with their last message, picked by a LATERAL probe
// of the messages (user_id, id) index. That is one probe per user of the account for each page
// (the sort needs every user's key); an activity column on users would be the next step for very
// large accounts (docs/dashboard.md).
import type { EntityManager } from '@mikro-orm/postgresql';
import { MessageSchema, UserSchema, type Message, type User } from '../db/entities/index.ts';
import { fromJson } from '../db/json.ts';

/**
 * A place in the list, after which the next page starts: before a conversation's last message
 * (message ids grow with time and belong to one user each, so they order conversations alone), or,
 * past every conversation with messages, before a user without any (newest user first).
 */
export type ActivityCursor = { kind: 'message'; id: number } | { kind: 'user'; id: number };

export interface ConversationSummary {
  user: User;
  /** The conversation's last message of any type (what the conversation view shows last); null when it has none. */
  lastMessage: Message | null;
}

export interface ConversationPage {
  rows: ConversationSummary[];
  /** Where the next page starts; null when there is none. */
  next: ActivityCursor | null;
}

export async function conversationsByActivity(
  em: EntityManager,
  accountId: number,
  limit: number,
  before?: ActivityCursor,
): Promise<ConversationPage> {
  const after =
    before?.kind === 'message' ? 'and (l.id < ? or l.id is null)' : before?.kind === 'user' ? 'and l.id is null and u.id < ?' : '';
  // One row more than asked for says whether there is a next page.
  const rows = await em.getConnection().execute<Array<Record<string, unknown>>>(
    `select u.*, to_jsonb(l) as last_message
     from users u
     left join lateral (select * from messages m where m.user_id = u.id order by m.id desc limit 1) l on true
     where u.account_id = ? and u.merged_into_user_id is null ${after}
     order by l.id desc nulls last, u.id desc
     limit ?`,
    [accountId, ...(before ? [before.id] : []), limit + 1],
  );
  const page = rows.slice(0, limit).map(({ last_message, ...user }) => {
    const last = fromJson<Record<string, unknown> | null>(last_message) ?? null;
    return { user: em.map(UserSchema, user), lastMessage: last ? em.map(MessageSchema, last) : null };
  });
  const tail = page[page.length - 1];
  const next: ActivityCursor | null =
    rows.length > limit && tail
      ? tail.lastMessage
        ? { kind: 'message', id: tail.lastMessage.id }
        : { kind: 'user', id: tail.user.id }
      : null;
  return { rows: page, next };
}
