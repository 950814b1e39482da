// Writing what became of attempts (settle.ts decides it): the worker's group commit hands a
// batch here, and a few statements log the attempts, end or release the deliveries, and
// promote the next of each chain whose delivery ended.
import type { Sql } from '../db/named.ts';
import { prepared } from '../db/prepared.ts';
import type { Transaction } from '../db/tx/transaction.ts';
import { handoffLease } from './handoff-lease.ts';
import { attemptsLogSql, type LoggedServicesRow } from './sql/attempts-log.ts';
import { disableGoneServicesSql } from './sql/disable-gone-services.ts';
import { endDeliveriesSql, toEnded, type EndDeliveriesRow } from './sql/end-deliveries.ts';
import { forgetPushTokensSql } from './sql/forget-push-tokens.ts';
import { lockEndedChainsSql } from './sql/lock-ended-chains.ts';
import { releaseDeliveriesSql } from './sql/release-deliveries.ts';

export interface AttemptRecord {
  status: number | null;
  error: string | null;
  /** When the request went out, and how long until its answer (or its failure). */
  startedAt: Date;
  durationMs: number;
}

/** What became of one attempt, as written to its delivery. */
export type OutcomeRecord = AttemptRecord & { id: string } & (
    | { type: 'delivered' }
    | { type: 'dead' }
    /** Dead, and the device's token, which its push service called unregistered or invalid, removed. */
    | { type: 'unregistered'; deviceId: number; token: string }
    /** Another attempt is due at `nextAttemptAt`. */
    | { type: 'retry'; nextAttemptAt: Date }
    /** 410 Gone: the Service is switched off; the delivery is due again as soon as it is enabled. */
    | { type: 'gone'; serviceId: number }
  );
type Ended = Extract<OutcomeRecord, { type: 'delivered' | 'dead' | 'unregistered' }>;
type Released = Extract<OutcomeRecord, { type: 'retry' | 'gone' }>;

/**
 * Writes the outcomes of many attempts inside the caller's transaction (the worker's group
 * commit), a few statements whatever their number: for a batch of deliveries that ended, the
 * chain locks, then (in the same round trip) one statement that logs the attempts, ends the
 * deliveries and promotes the next of their chains. Chains are locked first and Services last,
 * each in ascending order, so batches of two nodes rarely wait on each other in a cycle (and one
 * that deadlocks is written again record by record). A record whose delivery is no longer this node's lease (or no longer
 * pending) changes nothing, except that a delivered one is recorded whoever holds it now: the
 * receiver has it. Returns the Services whose deliveries changed, for the dashboard's live counts.
 * The caller's transaction ends here: the last statement carries its COMMIT (see prepared()).
 */
export async function writeOutcomes(tx: Transaction, node: string, records: readonly OutcomeRecord[]): Promise<number[]> {
  const ended: Ended[] = [];
  const released: Released[] = [];
  for (const record of records) {
    if (record.type === 'delivered' || record.type === 'dead' || record.type === 'unregistered') ended.push(record);
    else released.push(record);
  }
  // The first statement that changes deliveries logs every attempt of the batch: its snapshot
  // shows the rows as the attempts found them.
  const log = attemptsLogSql(node, records);
  const loggedByEnd = ended.length > 0 ? await end(tx, node, ended, log, released.length === 0) : null;
  const loggedByRelease = released.length > 0 ? await release(tx, node, released, loggedByEnd ? null : log) : null;
  return loggedByEnd ?? loggedByRelease ?? [];
}

/**
 * Ends deliveries (delivered or dead), and makes the next pending delivery of each of their
 * chains ready. The chain locks (taken in ascending order, as the outbox does) keep a
 * concurrent enqueue from missing the promotion: they are taken by a statement of their own, so
 * that the next statement's snapshot shows whatever an enqueue that held them committed. That
 * statement then logs the attempts (`log`), ends the deliveries and promotes the heads at once:
 * all three see the rows as they were before it, so the new head is the first pending delivery
 * of its chain that is not being ended. A chain is (Service, ordering key), Service 0 for pushes
 * (their ordering key is the device). With `last`, its last statement carries the transaction's
 * COMMIT.
 */
async function end(tx: Transaction, node: string, records: readonly Ended[], log: Sql, last: boolean): Promise<number[]> {
  // Only the token that was refused: the app may have registered a new one since.
  const unregistered = records.flatMap((r) => (r.type === 'unregistered' ? [r] : []));
  const ended = records.map((r) => ({ ...r, state: r.type === 'unregistered' ? ('dead' as const) : r.type }));
  // Each new head to a Service is leased to this node's worker when it has room (handoff.ts).
  const room = handoffLease(tx.handoffTarget(), 'h.eligible', 'h.service_id', 'h.seq');
  // The second statement needs nothing of the first's answer, so both leave together (pipelined:
  // the database runs the second once the first holds its locks, and its snapshot is still taken
  // after them). Waiting for the first's answer held the transaction open, idle, until this
  // node's event loop read it: time the embedded database's one connection can do nothing else.
  // Both are built before either is sent. The second may carry the COMMIT: that is safe because
  // the first's one value, an array literal of the ids, is nothing prepared() or pg refuses
  // before sending, so the COMMIT never leaves without the locks; whatever the database refuses
  // fails the second statement too, in the aborted transaction.
  const lock = lockEndedChainsSql(records.map((r) => r.id));
  const ending = endDeliveriesSql({ node, ended, log, room });
  const [, [row]] = await allAnswered(
    prepared(tx, lock),
    prepared<EndDeliveriesRow>(tx, ending, { commit: last && unregistered.length === 0 }),
  );
  const { serviceIds, claims, due } = toEnded(row);
  tx.handOff(claims);
  if (due) tx.markDue();
  if (unregistered.length > 0) await prepared(tx, forgetPushTokensSql(unregistered), { commit: last });
  return serviceIds;
}

/**
 * Gives leases back with the next attempt due: at `nextAttemptAt` for a retry, at once for a
 * 410 (nothing is claimed from a disabled Service, so it waits for the operator). Services
 * that answered 410 are switched off until an operator enables them again; their deliveries
 * stay pending (the receiver did not refuse the payload, the endpoint is gone), so they go
 * out, in order, once the Service is enabled. Logs the attempts too when `log` is given (no
 * delivery of the batch ended); returns the Services of what it logged.
 */
async function release(tx: Transaction, node: string, records: readonly Released[], log: Sql | null): Promise<number[]> {
  const gone = [...new Set(records.flatMap((r) => (r.type === 'gone' ? [r.serviceId] : [])))].sort((a, b) => a - b);
  // The transaction's last statement carries its COMMIT.
  const logged = await prepared<LoggedServicesRow>(tx, releaseDeliveriesSql({ node, released: records, log }), {
    commit: gone.length === 0,
  });
  if (gone.length > 0) await prepared(tx, disableGoneServicesSql(gone), { commit: true });
  return log ? logged.map((r) => r.serviceId) : [];
}

/**
 * Both statements' answers; the first failure once both are in (the second of two pipelined
 * statements fails when the first did, and a rejection left unawaited would crash the process).
 */
async function allAnswered<A, B>(first: Promise<A>, second: Promise<B>): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled([first, second]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}
