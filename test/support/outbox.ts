// The outbox (the deliveries table) read back for assertions. Every delivery is written in the
// transaction of the change that causes it (src/deliveries/outbox.ts), so once an API call has
// answered, the rows it caused are all there: a count read right then is exact. "Nothing was
// delivered" is asserted on the rows, not by watching a receiver stay quiet for a while, and
// "exactly these were delivered" ends at a point after which nothing more can come: every row
// of the Service delivered.
import { expect } from 'chai';
import type { DeliveryKind, DeliveryState } from '../../src/db/entities/index.ts';
import type { Received, Receiver } from './receiver.ts';
import { sharedServer, type TestServer } from './server.ts';

export interface OutboxRow {
  /** The `webhook-id`. */
  id: string;
  seq: number;
  serviceId: number;
  /** The user whose deliveries are ordered (for a merge, the anonymous user); null for account-wide actions. */
  orderingKey: number | null;
  kind: DeliveryKind;
  state: DeliveryState;
  payload: unknown;
}

export interface OutboxScope {
  serviceId: number;
  /** Only the deliveries ordered by this user (their ordering key). */
  userId?: number;
}

/** The Service's outbox rows (of one user, if given), in the order they were written. */
export async function outboxRows(scope: OutboxScope, server: TestServer = sharedServer()): Promise<OutboxRow[]> {
  const byUser = scope.userId !== undefined;
  const rows = await server.deps.db.orm.em
    .fork()
    .getConnection()
    .execute<
      Array<{
        id: string;
        seq: string | number;
        service_id: number;
        ordering_key: number | null;
        kind: DeliveryKind;
        state: DeliveryState;
        payload: string;
      }>
    >(
      `select id, seq, service_id, ordering_key, kind, state, payload from deliveries
       where service_id = ?${byUser ? ' and ordering_key = ?' : ''}
       order by seq`,
      byUser ? [scope.serviceId, scope.userId] : [scope.serviceId],
    );
  return rows.map((r) => ({
    id: r.id,
    seq: Number(r.seq),
    serviceId: r.service_id,
    orderingKey: r.ordering_key,
    kind: r.kind,
    state: r.state,
    payload: JSON.parse(r.payload) as unknown,
  }));
}

/**
 * Asserts that the Service has exactly `count` outbox rows (of one user, if given). Call it
 * right after the API call answered: the count is exact at that moment, no waiting needed.
 */
export async function expectOutbox(
  scope: OutboxScope,
  count: number,
  what?: string,
  server: TestServer = sharedServer(),
): Promise<OutboxRow[]> {
  const rows = await outboxRows(scope, server);
  const label = `${what ?? 'deliveries'} in the outbox of Service ${scope.serviceId}${scope.userId !== undefined ? ` for user ${scope.userId}` : ''}`;
  expect(
    rows.map((r) => ({ kind: r.kind, payload: r.payload })),
    label,
  ).to.have.length(count);
  return rows;
}

/** Nothing will be delivered to these Services: they have no outbox rows at all. */
export async function expectNothingEnqueued(serviceIds: number[], what?: string, server: TestServer = sharedServer()): Promise<void> {
  for (const serviceId of serviceIds) await expectOutbox({ serviceId }, 0, what ?? 'nothing enqueued: deliveries', server);
}

/** Polls until none of the Service's rows is pending (a wait with a deadline, not a timing assertion). */
export async function outboxSettled(serviceId: number, timeoutMs = 15_000, server: TestServer = sharedServer()): Promise<OutboxRow[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await outboxRows({ serviceId }, server);
    if (rows.every((r) => r.state !== 'pending')) return rows;
    if (Date.now() > deadline)
      throw new Error(`Service ${serviceId} still has ${rows.filter((r) => r.state === 'pending').length} pending deliveries`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The receiver got exactly `count` requests, the deliveries of the Service and nothing else:
 * waits for `count`, then until every outbox row of the Service is final, and asserts that
 * there are `count` rows, all delivered, and that the receiver got each of them once. A row is
 * marked delivered only after the receiver answered it, so at that point every request the
 * rows will ever cause has arrived; one more request than rows fails, whenever it came.
 * For receivers that answer 2xx (a retried delivery would be two requests for one row).
 */
export async function receivedExactly(
  receiver: Receiver,
  serviceId: number,
  count: number,
  timeoutMs = 15_000,
  server: TestServer = sharedServer(),
): Promise<Received[]> {
  let rows: OutboxRow[] = [];
  const requests = await receiver.exactly(
    count,
    async () => {
      rows = await outboxSettled(serviceId, timeoutMs, server);
    },
    timeoutMs,
  );
  expect(
    rows.map((r) => r.state),
    `the outbox rows of Service ${serviceId}`,
  ).to.deep.equal(rows.map(() => 'delivered'));
  expect(rows, `the outbox rows of Service ${serviceId}`).to.have.length(count);
  const ids = requests.map((r) => String(r.headers['webhook-id']));
  expect([...ids].sort(), 'one request for each row (by webhook-id)').to.deep.equal(rows.map((r) => r.id).sort());
  return requests;
}
