// What an email delivery sends, read when it is sent (not when it was written): the user's
// address and whether they unsubscribed, their unseen answers of the burst, the page they chatted
// on. A delivery whose user received a later answer, saw every answer, or has no address (any
// more) ends without an email; one whose user has a socket connected waits.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AgentSnapshot, MediaReference, MessageContent } from '../db/entities/index.ts';
import { MessageStatusValue, MessageType } from '../db/entities/index.ts';
import { prepared } from '../db/prepared.ts';

export interface EmailPayload {
  userId: number;
  throughMessageId: number;
}

export interface BurstMessage {
  id: number;
  message: string | null;
  media: MediaReference | null;
  content: MessageContent | null;
  agent: AgentSnapshot | null;
  createdAt: Date;
}

/** Whom an email is written to, and from which account: what every email Palaver sends needs. */
export interface Addressee {
  accountId: number;
  accountName: string;
  userId: number;
  email: string;
  name: string | null;
  language: string | null;
}

export interface Burst extends Addressee {
  messages: BurstMessage[];
  /** The page address the customer last chatted on (http or https), if known. */
  pageUrl: string | null;
}

export type Composed = { kind: 'send'; burst: Burst } | { kind: 'skip'; reason: string };

/** Who an email goes to, as both the answers' emails and the transcript read it (RECIPIENT_COLUMNS). */
export interface Recipient {
  accountId: number;
  accountName: string;
  email: string | null;
  name: string | null;
  language: string | null;
  unsubscribed: boolean;
}

/** The columns of Recipient, from `users u join accounts a on a.id = u.account_id`. */
export const RECIPIENT_COLUMNS = `u.account_id as "accountId", a.name as "accountName", u.email, u.contact_name as name,
            u.contact_language as language, u.email_unsubscribed_at is not null as unsubscribed`;

/** Whether an email can go to this recipient: found, with an address, not unsubscribed. */
export function isReachable<T extends Recipient>(user: T | undefined): user is T & { email: string } {
  return user !== undefined && user.email !== null && !user.unsubscribed;
}

/** Why no email goes to a recipient isReachable() turned down. */
export function unreachable(user: Recipient | undefined): { kind: 'skip'; reason: string } {
  return { kind: 'skip', reason: !user || user.email === null ? 'no email address' : 'unsubscribed' };
}

/**
 * The emails sent so far bound the burst from below: an answer covered by an email that went
 * out (state delivered with SMTP status 250) is never sent again. Reads only committed rows, so
 * it needs no lock: the chain lets one email of a user be attempted at a time.
 */
export async function composeEmail(em: EntityManager, payload: EmailPayload, { retry }: { retry: boolean }): Promise<Composed> {
  const { userId, throughMessageId } = payload;
  const [user] = await prepared<
    Recipient & { newest: string | number | null; sentThrough: string | number | null; pageUrl: string | null }
  >(
    em,
    `select ${RECIPIENT_COLUMNS},
            (select max(m.id) from messages m where m.user_id = u.id and m.type_id = ?) as newest,
            (select max((d.payload::jsonb ->> 'throughMessageId')::bigint) from deliveries d
              where d.user_id = u.id and d.kind = 'email' and d.state = 'delivered' and d.last_status = 250) as "sentThrough",
            coalesce((select m.request_url from messages m where m.user_id = u.id and m.request_url is not null order by m.id desc limit 1),
                     (select v.referer from devices v where v.user_id = u.id and v.referer is not null order by v.updated_at desc limit 1))
              as "pageUrl"
       from users u join accounts a on a.id = u.account_id
      where u.id = ?`,
    [MessageType.agent, userId],
  );
  if (!isReachable(user)) return unreachable(user);
  // A later answer's email (later in this user's chain) carries the whole burst. Not on a retry:
  // the server may have taken the first attempt (its reply lost), so the retry is the same email
  // under the same Message-ID, and the later one starts after it.
  if (!retry && Number(user.newest ?? 0) > throughMessageId) return { kind: 'skip', reason: 'superseded by a later answer' };
  const messages = await prepared<BurstMessage>(
    em,
    `select id, message, media, content, agent, created_at as "createdAt" from messages
      where user_id = ? and type_id = ? and id > ? and id <= ? and status < ?
      order by id`,
    [userId, MessageType.agent, Number(user.sentThrough ?? 0), throughMessageId, MessageStatusValue.seen],
  );
  if (messages.length === 0) return { kind: 'skip', reason: 'seen' };
  return {
    kind: 'send',
    burst: {
      accountId: user.accountId,
      accountName: user.accountName,
      userId,
      email: user.email,
      name: user.name,
      language: user.language,
      messages: messages.map((m) => ({ ...m, id: Number(m.id), createdAt: new Date(m.createdAt) })),
      pageUrl: user.pageUrl && /^https?:\/\//i.test(user.pageUrl) ? user.pageUrl : null,
    },
  };
}
