// What a committed transaction hands to its node's delivery worker (Transaction.handOff and
// markDue record it; db/tx/outlets.ts passes it to DeliveryWorker.takeOver). A delivery that a
// transaction writes ready (the head of an idle chain), or makes ready by ending the one before
// it, is leased to this node's worker by the statement that writes it and handed over when the
// transaction commits: no claim statement, and no wait for the worker's next claim. Whatever
// became due without a lease (the worker was full, a push, a retry) only nudges the worker, which
// claims it. A lease taken here is the same lease a claim takes: if the node dies before the
// attempt, the lease runs out and any node claims the delivery. The worker takes hand-offs only
// while it is caught up (nothing due is left to claims) and within the limits its claims keep
// (per Service and in all); otherwise newer deliveries would take every freed slot ahead of
// older ones waiting in the table.
import { pgIntArray } from '../db/pg-arrays.ts';
import type { HandoffTarget } from '../db/tx/transaction.ts';

export type { HandoffTarget, Room } from '../db/tx/transaction.ts';

/**
 * SQL for a statement that leases rows: `leased`, an expression of its select list, true for
 * the first `free` of each Service's eligible rows (in `order`), and `join`, for its from list,
 * which joins `room(service_id, free)` on the Service. Their parameters are roomParams(), in
 * that order (the select list comes before the from list).
 */
export function leaseSql(eligible: string, serviceColumn: string, order: string): { join: string; leased: string } {
  return {
    join: `left join unnest(?::int[], ?::int[]) as room(service_id, free) on room.service_id = ${serviceColumn}`,
    leased: `(${eligible}) and row_number() over (partition by ${serviceColumn}, (${eligible}) order by ${order}) <= coalesce(room.free, ?::int)`,
  };
}

export function roomParams(target: HandoffTarget | null): unknown[] {
  return [target?.free.otherwise ?? 0, pgIntArray(target?.free.services ?? []), pgIntArray(target?.free.free ?? [])];
}
