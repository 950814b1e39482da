// `inbox`: the team inbox of an account with 100,000 conversations. The account is filled by a
// few set-based statements straight into PostgreSQL (users, one customer message each, their
// inbox state: open, snoozed, resolved, assigned or not, owned by the inbox or by one of two
// bots), then each view is paged through with GET /adminApi/accounts/{id}/inbox (keyset, 50 a
// page), its p50 on loopback beside the same statement sent straight to PostgreSQL (the
// database's share) and its plan read with EXPLAIN: which indexes, and whether anything sorts
// or reads the whole table. Then an operator's answer (Admin API) and a Service's (Service API),
// in turn, each timed until the customer's socket has the message; the Service's is the baseline.
import pg from 'pg';
import type { Socket } from 'socket.io-client';
import { inboxStatement, type InboxQuery } from '../../src/conversations/inbox.ts';
import { percentile } from './load.ts';
import { ADMIN, registerDevices, type BenchPalaver } from './palaver.ts';
import { closeSockets, openSockets } from './sockets.ts';
import { progress, ratio, type Metric } from './support.ts';

export interface InboxOptions {
  conversations: number;
  /** Pages read per view (each measured). */
  pages: number;
  /** Answers of each kind. */
  answers: number;
}

const VIEWS = ['mine', 'unassigned', 'open', 'bots', 'resolved'] as const;

async function call<T>(url: string, method: string, token: string, body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as { data: T; paging?: { after: string | null } };
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** `?` placeholders as pg's `$n` (the statement has no `?` of its own). */
const numbered = (text: string) => {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
};

/** The account filled: `count` conversations, by the user's place g (1…count) in a pattern of 20. */
async function populate(
  db: pg.Client,
  ids: { account: number; inbox: number; bots: number[]; me: number; colleague: number },
  count: number,
) {
  const [botA, botB] = ids.bots;
  const before = (await db.query<{ id: number }>('select coalesce(max(id), 0)::int as id from users')).rows[0]?.id ?? 0;
  await db.query(
    `insert into users (account_id, kind, owner_service_id, created_at)
     select $1::int, 'anonymous',
            case when g % 20 < 10 or g % 20 >= 17 then $2::int when g % 2 = 0 then $3::int else $4::int end,
            now() - g * interval '20 seconds'
     from generate_series(1, $5::int) g`,
    [ids.account, ids.inbox, botA, botB, count],
  );
  // The users just made, each with its place g.
  const numberedUsers = `select id, row_number() over (order by id) as g, created_at, owner_service_id
                         from users where account_id = $1 and id > ${before}`;
  await db.query(
    `insert into messages (user_id, type_id, message, status, created_at)
     select id, 1, 'Where is my order ' || g || '?', 2, created_at from (${numberedUsers}) u order by id`,
    [ids.account],
  );
  // 40% the inbox's and open (a quarter each mine and a colleague's), 10% snoozed (half of them
  // past their time), 35% a bot's (open or snoozed), 15% resolved; a fifth nobody waits on.
  await db.query(
    `insert into conversation_states (user_id, account_id, owner_service_id, status, snoozed_until, assignee_operator_id,
                                      waiting_since, read_message_id)
     select u.id, $1::int, u.owner_service_id,
            case when g % 20 in (8, 9, 16) then 'snoozed' when g % 20 >= 17 then 'resolved' else 'open' end,
            case when g % 20 in (8, 16) then now() - interval '1 hour' when g % 20 = 9 then now() + interval '1 day' end,
            case when g % 20 < 8 and g % 4 = 1 then $2::int when g % 20 < 8 and g % 4 = 2 then $3::int end,
            case when g % 5 = 0 then null else u.created_at end,
            case when g % 3 = 0 then (select max(m.id) from messages m where m.user_id = u.id) else 0 end
     from (${numberedUsers}) u`,
    [ids.account, ids.me, ids.colleague],
  );
  await db.query('analyze users; analyze messages; analyze conversation_states;');
}

interface Plan {
  indexes: string[];
  /** Nodes that read a table whole, or sort more rows than the page's ranges gave. */
  warnings: string[];
  executionMs: number;
}

function readPlan(plan: Record<string, unknown>, out: Plan): void {
  const type = String(plan['Node Type']);
  if (typeof plan['Index Name'] === 'string') out.indexes.push(plan['Index Name']);
  if (type === 'Seq Scan') out.warnings.push(`Seq Scan on ${String(plan['Relation Name'])}`);
  if (type === 'Sort' && Number(plan['Actual Rows']) > 1000) out.warnings.push(`Sort of ${String(plan['Actual Rows'])} rows`);
  for (const child of (plan.Plans as Array<Record<string, unknown>> | undefined) ?? []) readPlan(child, out);
}

export async function benchInbox(palaver: BenchPalaver, databaseUrl: string, options: InboxOptions): Promise<Metric> {
  const login = await fetch(`${palaver.url}/adminApi/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  const { token } = ((await login.json()) as { data: { token: string } }).data;
  const base = `${palaver.url}/adminApi`;
  const accountId = palaver.account.id;
  const overview = await call<{ inbox: { id: number } | null }>(`${base}/accounts/${accountId}`, 'GET', token);
  if (!overview.inbox) throw new Error('the bench account has no inbox');
  const inbox = overview.inbox.id;
  const second = await call<{ id: number }>(`${base}/accounts/${accountId}/services`, 'POST', token, {
    name: 'Second bot',
    webhookUrl: null,
  });
  const me = (await call<{ id: number }>(`${base}/session`, 'GET', token)).id;
  const colleague = (
    await call<{ id: number }>(`${base}/operators`, 'POST', token, {
      email: 'colleague@palaver.local',
      password: 'colleague password',
      grants: [{ permission: 'conversations:reply', accountId }],
    })
  ).id;
  await call(`${base}/session`, 'PATCH', token, { displayName: 'Bench operator' });

  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    progress(`populating ${options.conversations} conversations (set-based inserts)`);
    const t0 = Date.now();
    await populate(db, { account: accountId, inbox, bots: [palaver.service.id, second.id], me, colleague }, options.conversations);
    const populateSeconds = Math.round((Date.now() - t0) / 100) / 10;
    progress(`populated in ${populateSeconds} s`);

    const views: Record<string, Record<string, unknown>> = {};
    let worst = 0;
    let worstBaseline = 0;
    for (const view of VIEWS) {
      const times: number[] = [];
      const dbTimes: number[] = [];
      let after: string | null = null;
      let rows = 0;
      let midCursor: InboxQuery['after'];
      for (let page = 0; page < options.pages; page++) {
        const url = `${base}/accounts/${accountId}/inbox?view=${view}&limit=50${after ? `&after=${encodeURIComponent(after)}` : ''}`;
        const t1 = process.hrtime.bigint();
        const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
        const json = (await response.json()) as {
          data: Array<{ user: { id: number }; waitingSince?: string | null }>;
          paging: { after: string | null };
        };
        times.push(Number(process.hrtime.bigint() - t1) / 1e6);
        if (!response.ok) throw new Error(`${view}: ${response.status} ${JSON.stringify(json)}`);
        rows += json.data.length;
        after = json.paging.after;
        if (page === Math.floor(options.pages / 2) && after) {
          const [waiting, userId] = after.split('.');
          midCursor = { waitingSince: waiting === 'none' ? null : new Date(Number(waiting)), userId: Number(userId) };
        }
        if (!after) break;
      }
      // The same statements straight to PostgreSQL: its share of each page, and the plan of a page mid-view.
      const query: InboxQuery = { accountId, inboxServiceId: inbox, operatorId: me, view, limit: 50, after: midCursor };
      const statement = inboxStatement(query, [palaver.service.id, second.id]);
      if (!statement) throw new Error(`${view}: no statement`);
      const text = numbered(statement.text);
      for (let i = 0; i < options.pages; i++) {
        const t1 = process.hrtime.bigint();
        await db.query(text, statement.params);
        dbTimes.push(Number(process.hrtime.bigint() - t1) / 1e6);
      }
      const explained = await db.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown>; 'Execution Time': number }> }>(
        `explain (analyze, format json) ${text}`,
        statement.params,
      );
      const [root] = explained.rows[0]?.['QUERY PLAN'] ?? [];
      const plan: Plan = { indexes: [], warnings: [], executionMs: Math.round((root?.['Execution Time'] ?? 0) * 100) / 100 };
      if (root) readPlan(root.Plan, plan);
      times.sort((a, b) => a - b);
      dbTimes.sort((a, b) => a - b);
      const p50 = percentile(times, 50);
      const dbP50 = percentile(dbTimes, 50);
      if (p50 > worst) {
        worst = p50;
        worstBaseline = dbP50;
      }
      views[view] = {
        p50_ms: Math.round(p50 * 100) / 100,
        p99_ms: Math.round(percentile(times, 99) * 100) / 100,
        database_p50_ms: Math.round(dbP50 * 100) / 100,
        pages: times.length,
        rows,
        indexes: [...new Set(plan.indexes)].sort(),
        warnings: plan.warnings,
        explain_ms: plan.executionMs,
      };
      const shown = `${Math.round(p50 * 100) / 100} ms a page (database ${Math.round(dbP50 * 100) / 100} ms), ${times.length} pages`;
      const warnings = plan.warnings.length ? `; ${plan.warnings.join('; ')}` : '';
      progress(`${view}: p50 ${shown}; ${[...new Set(plan.indexes)].join(', ')}${warnings}`);
    }

    // Answers to one customer whose socket is open: operator and Service in turn.
    const [device] = await registerDevices(palaver, 1, 'inbox');
    if (!device) throw new Error('no device');
    const [socket] = await openSockets(palaver.url, 1, { identification: device.identification });
    if (!socket) throw new Error('no socket');
    const arrived = (s: Socket, text: string) =>
      new Promise<void>((resolve) => {
        const listener = (message: { message?: string }) => {
          if (message.message !== text) return;
          s.off('message', listener);
          resolve();
        };
        s.on('message', listener);
      });
    const operatorTimes: number[] = [];
    const serviceTimes: number[] = [];
    progress(`answers: ${options.answers} from an operator and ${options.answers} from the Service, in turn, to the customer's socket`);
    for (let i = 0; i < options.answers * 2 + 20; i++) {
      const byOperator = i % 2 === 0;
      const text = `${byOperator ? 'operator' : 'service'} answer ${i}`;
      const seen = arrived(socket, text);
      const t1 = process.hrtime.bigint();
      if (byOperator) await call(`${base}/accounts/${accountId}/users/${device.userId}/messages`, 'POST', token, { message: text });
      else
        await call(`${palaver.url}/users/${device.userId}/messages`, 'POST', palaver.service.apiKey, {
          message: text,
          agent: { id: 1, name: 'Bot' },
        });
      await seen;
      const ms = Number(process.hrtime.bigint() - t1) / 1e6;
      // The first ten of each warm up both paths.
      if (i >= 20) (byOperator ? operatorTimes : serviceTimes).push(ms);
      await new Promise((r) => setTimeout(r, 20));
    }
    closeSockets([socket]);
    operatorTimes.sort((a, b) => a - b);
    serviceTimes.sort((a, b) => a - b);
    const operatorP50 = percentile(operatorTimes, 50);
    const serviceP50 = percentile(serviceTimes, 50);
    progress(`answers: operator p50 ${operatorP50.toFixed(2)} ms, Service p50 ${serviceP50.toFixed(2)} ms`);
    return {
      value: Math.round(worst * 100) / 100,
      unit: 'ms (p50 a page, slowest view)',
      baseline: Math.round(worstBaseline * 100) / 100,
      ratio: ratio(worst, worstBaseline),
      conversations: options.conversations,
      populate_s: populateSeconds,
      views,
      answer: {
        operator_p50_ms: Math.round(operatorP50 * 100) / 100,
        service_p50_ms: Math.round(serviceP50 * 100) / 100,
        ratio: ratio(operatorP50, serviceP50),
        operator_p99_ms: Math.round(percentile(operatorTimes, 99) * 100) / 100,
        service_p99_ms: Math.round(percentile(serviceTimes, 99) * 100) / 100,
        answers: options.answers,
      },
    };
  } finally {
    await db.end();
  }
}
