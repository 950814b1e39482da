// Messages written set-based (messages.ts, insertLocked), in one statement after the users' locks
// (so its snapshot sees every earlier commit): ids taken in row order (unless the lock statement
// took them), each message's previous client-visible one (an earlier row of the batch, or the
// conversation's last before it), the insert, which the rest of the statement does not see, the
// team's side of the conversations (the inbox), and, when given, the messages' deliveries
// (deliveries/sql/deliveries-cte.ts) and the users' current agents (users.ts).
import { MessageType, type AgentSnapshot } from '../../db/entities/index.ts';
import { fromJson } from '../../db/json.ts';
import { named, type Sql } from '../../db/named.ts';
import { DELIVERIES_OUT, type WrittenRow } from '../../deliveries/sql/deliveries-cte.ts';
import { CURRENT_AGENTS_OUT } from '../users.ts';

/** One message to write (snake_case: the columns of its jsonb record). */
export interface MessageInsertRow {
  n: number;
  taken_id: number | null;
  user_id: number | undefined;
  device_id?: number | null;
  type_id: number;
  message?: string | null;
  media?: unknown;
  agent?: unknown;
  content?: unknown;
  request_url?: string | null;
  client_message_id: string | null;
}

export interface InsertMessagesValues {
  rows: readonly MessageInsertRow[];
  createdAt: Date;
  /** The deliveries' CTEs, written by the same statement. */
  deliveries: Sql | null;
  /** The current agents' CTE (users.ts), set by the same statement. */
  agents: Sql | null;
  /**
   * CTEs ending in `verdict`, one row with `ok` (false writes nothing) and what else the check
   * says, answered with the rows (senders-as-seen.ts, answerable-at-once.ts): for a statement
   * that checks what it writes on (messages-at-once.ts), whose ids it draws.
   */
  check?: Sql | null;
}

/** The CTE of the statement's messages: `n`, their position in its rows, and `id` (deliveries-cte.ts fills payloads from it). */
export const MESSAGES_CTE = 'p';

export interface InsertMessagesRow {
  /** With a check: whether it passed (else nothing was written), and what failed it (senders-as-seen.ts). */
  ok?: boolean;
  stale?: number[] | null;
  standby?: number[] | null;
  reached?: number[] | null;
  messages: unknown;
  deliveries?: unknown;
  agents?: unknown;
}

export interface InsertedMessages {
  /** Per row, in order: its id and its previous client-visible message's id. */
  ids: Array<[number, number | null]>;
  deliveries: WrittenRow[];
  /** With agents: each user's current agent before the statement. */
  agentsBefore: Map<number, AgentSnapshot | null> | null;
}

/**
 * The team's side of the conversations written to (conversations/inbox.ts), in the statement that
 * writes the messages and under the same locks: a customer message (typeId 1) makes the customer
 * wait (since the first one not answered) and reopens a resolved or snoozed conversation, with a
 * timeline line; an agent message (typeId 2) ends the wait and marks what came before it read.
 * The state row is made with the conversation's first message of either kind.
 */
const INBOX_STATE_CTES = `inbox_last as (
       select distinct on (user_id) user_id, type_id, id from p where type_id in (${MessageType.user}, ${MessageType.agent})
       order by user_id, n desc
     ),
     inbox_customer as (select distinct user_id from p where type_id = ${MessageType.user}),
     inbox_before as (select s.user_id, s.status from conversation_states s join inbox_customer c on c.user_id = s.user_id),
     inbox_set as (
       insert into conversation_states as s (user_id, account_id, owner_service_id, status, waiting_since, read_message_id, updated_at)
       select l.user_id, u.account_id, u.owner_service_id, 'open',
              case when l.type_id = ${MessageType.user} then :createdAt::timestamptz end,
              case when l.type_id = ${MessageType.agent} then l.id else 0 end, now()
       from inbox_last l join users u on u.id = l.user_id
       on conflict (user_id) do update set
         waiting_since = case when excluded.waiting_since is null then null else coalesce(s.waiting_since, excluded.waiting_since) end,
         read_message_id = greatest(s.read_message_id, excluded.read_message_id),
         status = case when excluded.user_id in (select user_id from inbox_customer) then 'open' else s.status end,
         snoozed_until = case when excluded.user_id in (select user_id from inbox_customer) then null else s.snoozed_until end,
         updated_at = now()
     ),
     inbox_reopened as (
       insert into conversation_events (user_id, operator_id, kind, data, created_at)
       select b.user_id, null, 'status', jsonb_build_object('from', b.status, 'to', 'open'), :createdAt::timestamptz
       from inbox_before b where b.status <> 'open'
     )`;

export function insertMessagesSql({ rows, createdAt, deliveries, agents, check = null }: InsertMessagesValues): Sql {
  return named(
    `with ${check ? ':check, ' : ''}r as (
       select r.*, coalesce(r.taken_id, nextval(pg_get_serial_sequence('messages', 'id'))) as id
       from jsonb_to_recordset(:rows::jsonb) as r(n int, taken_id bigint, user_id int, device_id int, type_id smallint,
                                               message text, media jsonb, agent jsonb, content jsonb, request_url text,
                                               client_message_id text)${check ? '\n       where (select ok from verdict)' : ''}
     ),
     ${MESSAGES_CTE} as (
       select r.*, coalesce(
                max(case when r.type_id <> ${MessageType.userSystem} then r.id end)
                  over (partition by r.user_id order by r.n rows between unbounded preceding and 1 preceding),
                (select max(m.id) from messages m where m.user_id = r.user_id and m.type_id <> ${MessageType.userSystem})) as prev_id
       from r
     ),
     inserted as (
       insert into messages (id, user_id, device_id, type_id, message, media, agent, content, request_url, client_message_id, status, created_at)
       select id, user_id, device_id, type_id, message, media, agent, content, request_url, client_message_id, 2, :createdAt::timestamptz from p
     )${deliveries ? ', :deliveries' : ''}${agents ? ', :agents' : ''}, ${INBOX_STATE_CTES}
     select ${check ? 'v.*, ' : ''}(select json_agg(json_build_array(id, prev_id) order by n) from p) as messages
            ${deliveries ? `, (select coalesce(json_agg(d order by d.n), '[]') from ${DELIVERIES_OUT} d) as deliveries` : ''}
            ${agents ? `, (select coalesce(json_agg(json_build_array(a.id, a.before)), '[]') from ${CURRENT_AGENTS_OUT} a) as agents` : ''}${check ? '\n     from verdict v' : ''}`,
    {
      ...(check ? { check } : {}),
      rows: JSON.stringify(rows),
      createdAt,
      ...(deliveries ? { deliveries } : {}),
      ...(agents ? { agents } : {}),
    },
  );
}

export function toInsertedMessages(row: InsertMessagesRow | undefined): InsertedMessages {
  const ids = (fromJson<Array<[number | string, number | string | null]>>(row?.messages) ?? []).map(
    ([id, prev]): [number, number | null] => [Number(id), prev === null ? null : Number(prev)],
  );
  return {
    ids,
    deliveries: fromJson<WrittenRow[]>(row?.deliveries) ?? [],
    agentsBefore: row?.agents === undefined ? null : new Map(fromJson<Array<[number, AgentSnapshot | null]>>(row.agents)),
  };
}
