// The team's side of a conversation (docs/dashboard.md, the team inbox): its status (open,
// snoozed, resolved), its assignee, private notes and the timeline lines of each change, and
// the inbox's views. Every change runs under the user's row lock (lockUsers) and compares the
// state it expects before it sets another, so two operators acting at once get one winner and
// one 409. None of it is a message: no client, webhook or push ever carries it.
import type { Transaction } from '../db/tx/transaction.ts';
import { transaction } from '../db/tx/run.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError, notFound } from '../errors.ts';
import { notify, type InboxChange } from './notices.ts';
import { lockUsers, refuseMerged } from './users.ts';

export type InboxStatus = 'open' | 'snoozed' | 'resolved';

export interface ConversationState {
  userId: number;
  accountId: number;
  ownerServiceId: number;
  /** As stored; a snooze whose time has passed reads as open (effectiveStatus). */
  status: InboxStatus;
  snoozedUntil: Date | null;
  assigneeId: number | null;
  waitingSince: Date | null;
  readMessageId: number;
  updatedAt: Date;
}

export interface TimelineEvent {
  id: number;
  userId: number;
  /** Null: the customer (a message that reopened the conversation). */
  operatorId: number | null;
  kind: 'note' | 'status' | 'assignee';
  text: string | null;
  data: Record<string, unknown> | null;
  createdAt: Date;
}

interface StateRow {
  user_id: number;
  account_id: number;
  owner_service_id: number;
  status: InboxStatus;
  snoozed_until: Date | string | null;
  assignee_operator_id: number | null;
  waiting_since: Date | string | null;
  read_message_id: number | string;
  updated_at: Date | string;
}

interface EventRow {
  id: number | string;
  user_id: number;
  operator_id: number | null;
  kind: TimelineEvent['kind'];
  text: string | null;
  data: Record<string, unknown> | string | null;
  created_at: Date | string;
}

const date = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

function stateOf(row: StateRow): ConversationState {
  return {
    userId: row.user_id,
    accountId: row.account_id,
    ownerServiceId: row.owner_service_id,
    status: row.status,
    snoozedUntil: date(row.snoozed_until),
    assigneeId: row.assignee_operator_id,
    waitingSince: date(row.waiting_since),
    readMessageId: Number(row.read_message_id),
    updatedAt: new Date(row.updated_at),
  };
}

function eventOf(row: EventRow): TimelineEvent {
  return {
    id: Number(row.id),
    userId: row.user_id,
    operatorId: row.operator_id,
    kind: row.kind,
    text: row.text,
    data: typeof row.data === 'string' ? (JSON.parse(row.data) as Record<string, unknown>) : row.data,
    createdAt: new Date(row.created_at),
  };
}

/** A snooze ends by itself at its time. */
export function effectiveStatus(state: Pick<ConversationState, 'status' | 'snoozedUntil'>, now = new Date()): InboxStatus {
  return state.status === 'snoozed' && state.snoozedUntil !== null && state.snoozedUntil <= now ? 'open' : state.status;
}

function sql<T>(em: EntityManager, text: string, params: unknown[]): Promise<T[]> {
  return em.getConnection().execute<T[]>(text, params, 'all', em.getTransactionContext());
}

const STATE_COLUMNS =
  'user_id, account_id, owner_service_id, status, snoozed_until, assignee_operator_id, waiting_since, read_message_id, updated_at';

/**
 * Locks the user (of this account, not merged) and answers its state, made (open) if the
 * conversation has none yet: a conversation without messages can be assigned or noted too.
 */
async function lockedState(tx: EntityManager, accountId: number, userId: number): Promise<ConversationState> {
  const user = (await lockUsers(tx, [userId])).get(userId);
  if (!user || user.accountId !== accountId) throw notFound('user_not_found');
  refuseMerged(user);
  const [row] = await sql<StateRow>(
    tx,
    `insert into conversation_states (user_id, account_id, owner_service_id) values (?, ?, ?)
     on conflict (user_id) do update set user_id = excluded.user_id
     returning ${STATE_COLUMNS}`,
    [user.id, user.accountId, user.ownerServiceId],
  );
  if (!row) throw new Error('conversation state not read');
  return stateOf(row);
}

async function addEvent(
  tx: EntityManager,
  event: { userId: number; operatorId: number; kind: TimelineEvent['kind']; text?: string | null; data?: object | null },
): Promise<TimelineEvent> {
  const [row] = await sql<EventRow>(
    tx,
    `insert into conversation_events (user_id, operator_id, kind, text, data) values (?, ?, ?, ?, ?::jsonb)
     returning id, user_id, operator_id, kind, text, data, created_at`,
    [event.userId, event.operatorId, event.kind, event.text ?? null, event.data ? JSON.stringify(event.data) : null],
  );
  if (!row) throw new Error('timeline line not written');
  return eventOf(row);
}

async function readState(em: EntityManager, userId: number): Promise<ConversationState> {
  const [row] = await sql<StateRow>(em, `select ${STATE_COLUMNS} from conversation_states where user_id = ?`, [userId]);
  if (!row) throw new Error('conversation state vanished');
  return stateOf(row);
}

function changed(tx: Transaction, userId: number, change: InboxChange): void {
  notify(tx, { kind: 'inbox', userId, change });
}

/**
 * The state of a conversation of the account, read without a lock (open, unassigned and nobody
 * waiting when it has none yet); null when the account has no such user.
 */
export async function conversationState(em: EntityManager, accountId: number, userId: number): Promise<ConversationState | null> {
  const [row] = await sql<StateRow & { owner: number }>(
    em,
    `select u.owner_service_id as owner, ${STATE_COLUMNS.split(', ')
      .map((c) => `s.${c}`)
      .join(', ')}
     from users u left join conversation_states s on s.user_id = u.id where u.id = ? and u.account_id = ?`,
    [userId, accountId],
  );
  if (!row) return null;
  if (row.user_id !== null) return stateOf(row);
  return {
    userId,
    accountId,
    ownerServiceId: row.owner,
    status: 'open',
    snoozedUntil: null,
    assigneeId: null,
    waitingSince: null,
    readMessageId: 0,
    updatedAt: new Date(),
  };
}

export interface AssigneeChange {
  accountId: number;
  userId: number;
  operatorId: number;
  /** The operator to assign, or null for nobody. */
  assigneeId: number | null;
  /** Compare-and-set: the assignee the caller saw. Another one now: 409 assignee_changed. */
  expectedAssigneeId: number | null;
}

/**
 * Assigns the conversation (or unassigns it) if its assignee is still the one the caller saw:
 * of two operators claiming an unassigned conversation at once, the first wins and the second
 * is answered 409 `assignee_changed` with the assignee there is now. The assignee must be an
 * enabled operator (422 `invalid_assignee`). Setting the one already set changes nothing.
 */
export async function changeAssignee(em: EntityManager, input: AssigneeChange): Promise<ConversationState> {
  return transaction(em, async (tx) => {
    const state = await lockedState(tx.em, input.accountId, input.userId);
    if (state.assigneeId !== input.expectedAssigneeId) {
      throw new AppError(409, 'assignee_changed', [], { assigneeId: state.assigneeId });
    }
    if (state.assigneeId === input.assigneeId) return state;
    if (input.assigneeId !== null) {
      const [operator] = await sql<{ id: number }>(tx.em, 'select id from operators where id = ? and disabled_at is null', [
        input.assigneeId,
      ]);
      if (!operator) throw new AppError(422, 'invalid_assignee');
    }
    await sql(tx.em, 'update conversation_states set assignee_operator_id = ?, updated_at = now() where user_id = ?', [
      input.assigneeId,
      input.userId,
    ]);
    await addEvent(tx.em, {
      userId: input.userId,
      operatorId: input.operatorId,
      kind: 'assignee',
      data: { from: state.assigneeId, to: input.assigneeId },
    });
    changed(tx, input.userId, 'assignee');
    return readState(tx.em, input.userId);
  });
}

export interface StatusChange {
  accountId: number;
  userId: number;
  operatorId: number;
  status: InboxStatus;
  /** With `snoozed`: until then; null, until the customer's next message. */
  snoozedUntil: Date | null;
  /** Compare-and-set, if given: the status the caller saw (a snooze that ended reads open). */
  expectedStatus?: InboxStatus | undefined;
}

/** Opens, snoozes or resolves the conversation; a customer message reopens it (messages.ts). */
export async function changeStatus(em: EntityManager, input: StatusChange): Promise<ConversationState> {
  return transaction(em, async (tx) => {
    const state = await lockedState(tx.em, input.accountId, input.userId);
    const now = effectiveStatus(state);
    if (input.expectedStatus !== undefined && now !== input.expectedStatus) {
      throw new AppError(409, 'status_changed', [], { status: now });
    }
    const snoozedUntil = input.status === 'snoozed' ? input.snoozedUntil : null;
    if (now === input.status && (state.snoozedUntil?.getTime() ?? null) === (snoozedUntil?.getTime() ?? null)) return state;
    await sql(tx.em, 'update conversation_states set status = ?, snoozed_until = ?, updated_at = now() where user_id = ?', [
      input.status,
      snoozedUntil,
      input.userId,
    ]);
    await addEvent(tx.em, {
      userId: input.userId,
      operatorId: input.operatorId,
      kind: 'status',
      data: { from: now, to: input.status, ...(snoozedUntil ? { snoozedUntil: snoozedUntil.toISOString() } : {}) },
    });
    changed(tx, input.userId, 'status');
    return readState(tx.em, input.userId);
  });
}

/** A private note between operators: a timeline line, never a message. */
export async function addNote(
  em: EntityManager,
  input: { accountId: number; userId: number; operatorId: number; text: string },
): Promise<TimelineEvent> {
  return transaction(em, async (tx) => {
    await lockedState(tx.em, input.accountId, input.userId);
    const note = await addEvent(tx.em, { userId: input.userId, operatorId: input.operatorId, kind: 'note', text: input.text });
    changed(tx, input.userId, 'note');
    return note;
  });
}

/** The team has read the conversation up to this message (its customer messages above are unread). */
export async function markRead(em: EntityManager, accountId: number, userId: number, messageId: number): Promise<ConversationState> {
  return transaction(em, async (tx) => {
    await lockedState(tx.em, accountId, userId);
    await sql(
      tx.em,
      `update conversation_states set read_message_id = greatest(read_message_id,
         (select coalesce(max(id), 0) from messages where user_id = ? and id <= ?)), updated_at = now()
       where user_id = ?`,
      [userId, messageId, userId],
    );
    return readState(tx.em, userId);
  });
}

/** The conversation's timeline lines, newest first, `before` an id. */
export async function timeline(
  em: EntityManager,
  accountId: number,
  userId: number,
  limit: number,
  before?: number,
): Promise<TimelineEvent[] | null> {
  const [user] = await sql<{ id: number }>(em, 'select id from users where id = ? and account_id = ?', [userId, accountId]);
  if (!user) return null;
  const rows = await sql<EventRow>(
    em,
    `select id, user_id, operator_id, kind, text, data, created_at from conversation_events
     where user_id = ?${before ? ' and id < ?' : ''} order by id desc limit ?`,
    before ? [userId, before, limit] : [userId, limit],
  );
  return rows.map(eventOf);
}

export type InboxView = 'mine' | 'unassigned' | 'open' | 'bots' | 'resolved';

/** Where a page ends: the customer's waiting time (null: nobody waits, last) and the user id. */
export interface InboxCursor {
  waitingSince: Date | null;
  userId: number;
}

export interface InboxRow {
  state: ConversationState;
  /** Customer messages the team has not read. */
  unread: number;
}

export interface InboxPage {
  rows: InboxRow[];
  next: InboxCursor | null;
}

export interface InboxQuery {
  accountId: number;
  /** The account's inbox Service: a conversation is the team's when it owns it. */
  inboxServiceId: number;
  operatorId: number;
  view: InboxView;
  limit: number;
  after?: InboxCursor | undefined;
  /** Full-text search: message text, customer identifier, additional-information values. */
  search?: string | undefined;
}

const WAITING = `coalesce(s.waiting_since, 'infinity'::timestamptz)`;
const ORDER = `order by ${WAITING}, s.user_id`;

/** One index range of a view: its equality conditions (an index prefix), in (waiting since, user id) order. */
interface Range {
  where: string[];
  params: unknown[];
}

/**
 * The ranges of a view, each read in order from the index whose prefix it fixes:
 * conversation_states_assignee (mine), _views (unassigned, open, bots), _status (resolved).
 * Open is two ranges, status open and a snooze whose time has passed; bots is one range per
 * other Service of the account (`botIds`) and status (open, snoozed): a condition like
 * `owner <> inbox` or `status <> 'resolved'` would leave only the account's part of the index
 * in use, and every row of the account to sort.
 */
function viewRanges(query: InboxQuery, botIds: readonly number[]): Range[] {
  const open = (where: string[], params: unknown[]): Range[] => [
    { where: [...where, `s.status = 'open'`], params },
    { where: [...where, `s.status = 'snoozed'`, `s.snoozed_until <= now()`], params },
  ];
  switch (query.view) {
    case 'mine':
      return open([`s.assignee_operator_id = ?`, `s.account_id = ?`], [query.operatorId, query.accountId]);
    case 'unassigned':
      return open(
        [`s.account_id = ?`, `s.owner_service_id = ?`, `s.assignee_operator_id is null`],
        [query.accountId, query.inboxServiceId],
      );
    case 'open':
      return open([`s.account_id = ?`, `s.owner_service_id = ?`], [query.accountId, query.inboxServiceId]);
    case 'bots':
      return botIds.flatMap((botId) =>
        (['open', 'snoozed'] as const).map((status) => ({
          where: [`s.account_id = ?`, `s.owner_service_id = ?`, `s.status = '${status}'`],
          params: [query.accountId, botId],
        })),
      );
    case 'resolved':
      return [{ where: [`s.account_id = ?`, `s.status = 'resolved'`], params: [query.accountId] }];
  }
}

/**
 * The statement of a page of a view (`?` placeholders), or null when the view cannot have a
 * row (bots, in an account without another Service). `botIds`: the account's other Services.
 * Each range of the view gives at most a page from its index, in order; the page is the first
 * of those few rows. Exported for the benchmark, which reads its plan (scripts/bench/inbox.ts).
 */
export function inboxStatement(query: InboxQuery, botIds: readonly number[]): { text: string; params: unknown[] } | null {
  const shared: Range = { where: [], params: [] };
  if (query.after) {
    shared.where.push(`(${WAITING}, s.user_id) > (coalesce(?::timestamptz, 'infinity'::timestamptz), ?)`);
    shared.params.push(query.after.waitingSince, query.after.userId);
  }
  if (query.search) {
    // The two GIN indexes (messages_text_search, users_text_search), their expressions as written.
    shared.where.push(`(s.user_id in (select m.user_id from messages m
                               where to_tsvector('simple'::regconfig, coalesce(m.message, '')) @@ plainto_tsquery('simple'::regconfig, ?))
                 or s.user_id in (select u.id from users u where u.account_id = ? and
                   (to_tsvector('simple'::regconfig, coalesce(u.unique_identifier, ''))
                    || jsonb_to_tsvector('simple'::regconfig, coalesce(u.additional_information, '{}'::jsonb), '["string", "numeric"]'))
                   @@ plainto_tsquery('simple'::regconfig, ?)))`);
    shared.params.push(query.search, query.accountId, query.search);
  }
  const ranges = viewRanges(query, botIds);
  if (ranges.length === 0) return null;
  const columns = STATE_COLUMNS.split(', ')
    .map((c) => `s.${c}`)
    .join(', ');
  const params: unknown[] = [];
  const branches = ranges.map((range) => {
    params.push(...range.params, ...shared.params, query.limit + 1);
    return `(select ${columns} from conversation_states s
              where ${[...range.where, ...shared.where].join(' and ')} ${ORDER} limit ?)`;
  });
  params.push(query.limit + 1);
  const text = `select ${columns},
            (select count(*) from messages m where m.user_id = s.user_id and m.type_id = 1 and m.id > s.read_message_id) as unread
     from (${branches.join(' union all ')}) s
     ${ORDER}
     limit ?`;
  return { text, params };
}

/** The account's Services other than its inbox: the owners of the bots view. */
export async function botServiceIds(em: EntityManager, accountId: number, inboxServiceId: number): Promise<number[]> {
  const rows = await sql<{ id: number }>(em, 'select id from services where account_id = ? and id <> ? order by id', [
    accountId,
    inboxServiceId,
  ]);
  return rows.map((r) => r.id);
}

/** One page of a view, the customer who has waited longest first (then those nobody keeps waiting), keyset-paged on (waiting since, user id). */
export async function inboxPage(em: EntityManager, query: InboxQuery): Promise<InboxPage> {
  const statement = inboxStatement(query, query.view === 'bots' ? await botServiceIds(em, query.accountId, query.inboxServiceId) : []);
  if (!statement) return { rows: [], next: null };
  const rows = await sql<StateRow & { unread: number | string }>(em, statement.text, statement.params);
  const page = rows.slice(0, query.limit).map((row) => ({ state: stateOf(row), unread: Number(row.unread) }));
  const last = page[page.length - 1];
  const next = rows.length > query.limit && last ? { waitingSince: last.state.waitingSince, userId: last.state.userId } : null;
  return { rows: page, next };
}
