// Deliveries for tests, made through the real outbox in a real transaction (the Client API
// will cause them once it exists), and read back from the real table.
import { transaction } from '../../src/db/tx/run.ts';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import type { DeliveryState } from '../../src/db/entities/index.ts';
import { enqueue, type DeliveryRequest } from '../../src/deliveries/outbox.ts';
import { findDelivery, type DeliveryLogEntry } from '../../src/deliveries/listings.ts';
import type { Received } from './receiver.ts';
import type { TestServer } from './server.ts';

export async function enqueueCommitted(
  server: TestServer,
  request: Partial<DeliveryRequest> & { recipients: number[] },
): Promise<string[]> {
  return transaction(server.deps.db.orm.em.fork(), (tx) =>
    enqueue(tx, { kind: 'event', payload: { n: 1 }, orderingKey: null, ...request }),
  );
}

/**
 * Polls the deliveries table until the row is in `state` (a wait with a deadline, not a timing
 * assertion). The server runs in this process: the polls slow down (25 ms, doubling to 250 ms)
 * so that a long wait leaves the delivery worker the CPU it is waiting for, and the deadline
 * only bounds a failure, with room for a heavily loaded machine.
 */
export async function waitForState(server: TestServer, id: string, state: DeliveryState, timeoutMs = 45_000): Promise<DeliveryLogEntry> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 25; ; pause = Math.min(pause * 2, 250)) {
    const row = await findDelivery(server.deps.db.orm.em.fork(), id);
    if (row?.state === state) return row;
    if (Date.now() > deadline) throw new Error(`delivery ${id} is ${row?.state ?? 'missing'}, not ${state}`);
    await new Promise((r) => setTimeout(r, pause));
  }
}

/**
 * Closes the server, and opens `held` (answers a Receiver holds, see gate()) once its delivery
 * worker is stopping: the attempts held are in flight at the stop, however slow the machine.
 */
export async function closeWhileHeld(server: TestServer, held: { open(): void }): Promise<void> {
  const closing = server.close();
  while (server.deps.deliveries && !server.deps.deliveries.stopping) await new Promise((r) => setImmediate(r));
  held.open();
  await closing;
}

/** Who holds the delivery's lease (a node), or null. */
export async function claimedBy(server: TestServer, id: string): Promise<string | null> {
  const rows = await server.deps.db.orm.em
    .fork()
    .getConnection()
    .execute<Array<{ claimed_by: string | null }>>(`select claimed_by from deliveries where id = ?`, [id]);
  return rows[0]?.claimed_by ?? null;
}

/** What a Service does with our request: verify it with the Standard Webhooks library. */
export function verify(secret: string, request: Received, body = request.body): unknown {
  return new Webhook(secret).verify(body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}

export function webhookId(request: Received | undefined): string {
  expect(request, 'a request').to.not.equal(undefined);
  return String(request?.headers['webhook-id']);
}

/**
 * For time that is part of the scenario (a retry schedule to run out, say). Not for "nothing
 * was delivered": count the outbox rows right after the answer instead (outbox.ts).
 */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
