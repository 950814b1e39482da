// What a committed transaction hands to its node's delivery worker. A delivery that a
// transaction writes ready (the head of an idle chain), or makes ready by ending the one before
// it, is leased to this node's worker by the statement that writes it and handed over when the
// transaction commits: no claim statement, and no wait for the worker's next claim. Whatever
// became due without a lease (the worker was full, a push, a retry) only nudges the worker, which
// claims it. A lease taken here is the same lease a claim takes: if the node dies before the
// attempt, the lease runs out and any node claims the delivery.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ClaimedWebhook } from './claims.ts';

export interface HandoffTarget {
  /** The worker's node name, written as `claimed_by`. */
  node: string;
  leaseMs: number;
  /** Whether the worker can take more now (it holds at most as many as its claims would). */
  hasRoom(): boolean;
}

/** A worker per ORM (per node; tests run several in one process), by the ORM's configuration, which forks share. */
const targets = new WeakMap<object, HandoffTarget>();

export function acceptHandoffs(em: EntityManager, target: HandoffTarget): void {
  targets.set(em.config, target);
}

export function refuseHandoffs(em: EntityManager): void {
  targets.delete(em.config);
}

/** The worker that can take deliveries leased in `em`'s transaction now, if any. */
export function handoffTarget(em: EntityManager): HandoffTarget | null {
  const target = targets.get(em.config);
  return target?.hasRoom() ? target : null;
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
