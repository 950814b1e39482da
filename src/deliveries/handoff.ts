// What a committed transaction hands to its node's delivery worker. A delivery that a
// transaction writes ready (the head of an idle chain), or makes ready by ending the one before
// it, is leased to this node's worker by the statement that writes it and handed over when the
// transaction commits: no claim statement, and no wait for the worker's next claim. Whatever
// became due without a lease (the worker was full, a push, a retry) only nudges the worker, which
// claims it. A lease taken here is the same lease a claim takes: if the node dies before the
// attempt, the lease runs out and any node claims the delivery. The worker takes hand-offs only
// while it is caught up (nothing due is left to claims) and within the limits its claims keep
// (per Service and in all); otherwise newer deliveries would take every freed slot ahead of
// older ones waiting in the table.
import type { EntityManager } from '@mikro-orm/postgresql';
import { pgIntArray } from '../db/pg-arrays.ts';
import type { ClaimedWebhook } from './claims.ts';

export interface HandoffTarget {
  /** The worker's node name, written as `claimed_by`. */
  node: string;
  leaseMs: number;
  /** How many more the worker takes now, per Service; null while it is behind, full or stopping. */
  room(): Room | null;
}

/** Per Service (`services[i]` takes `free[i]` more), and `otherwise` for any other Service. */
export interface Room {
  services: number[];
  free: number[];
  otherwise: number;
}

/** A worker per ORM (per node; tests run several in one process), by the ORM's configuration, which forks share. */
const targets = new WeakMap<object, HandoffTarget>();

export function acceptHandoffs(em: EntityManager, target: HandoffTarget): void {
  targets.set(em.config, target);
}

export function refuseHandoffs(em: EntityManager): void {
  targets.delete(em.config);
}

/** The worker that can take deliveries leased in `em`'s transaction now, and how many, if any. */
export function handoffTarget(em: EntityManager): (HandoffTarget & { free: Room }) | null {
  const target = targets.get(em.config);
  const free = target?.room();
  return target && free ? { ...target, free } : null;
}

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

export function roomParams(target: ReturnType<typeof handoffTarget>): unknown[] {
  return [target?.free.otherwise ?? 0, pgIntArray(target?.free.services ?? []), pgIntArray(target?.free.free ?? [])];
}

/** Per transaction: the deliveries it leased to its node's worker, and whether it made others due. */
const handed = new WeakMap<object, ClaimedWebhook[]>();
const madeDue = new WeakSet<object>();

export function handOff(tx: EntityManager, claims: readonly ClaimedWebhook[]): void {
  if (claims.length === 0) return;
  const list = handed.get(tx) ?? [];
  list.push(...claims);
  handed.set(tx, list);
}

/** Deliveries became due in `tx` that nobody holds: the worker should claim once it commits. */
export function markDue(tx: EntityManager): void {
  madeDue.add(tx);
}

/** Read once the transaction committed: what the worker takes over, and whether it should claim. */
export function committed(tx: object): { claims: ClaimedWebhook[]; due: boolean } {
  const claims = handed.get(tx) ?? [];
  handed.delete(tx);
  const due = madeDue.has(tx);
  madeDue.delete(tx);
  return { claims, due };
}
