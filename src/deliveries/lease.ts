// The lease under which a node attempts a delivery: `claimed_by` names the node, and
// `claimed_until` ends the lease. Every statement that leases rows (claims, hand-offs of
// written deliveries, promotions of the next of a chain) writes it through leaseValues(), and
// every statement that gives one back through UNLEASED, so a lease is the same however it was
// taken: a node that dies before its attempt loses it when it runs out, after which any node
// claims the delivery again.
import { named, type Sql } from '../db/named.ts';

/** Who holds a lease and for how long. */
export interface Lease {
  node: string;
  ms: number;
}

/**
 * Outlives the longest attempt (the timeout) plus recording it, so two nodes never send one
 * delivery at the same time; short enough that a crashed node's work is taken up soon.
 */
export function leaseMsFor(timeoutMs: number): number {
  return timeoutMs * 2 + 5000;
}

/** The set list of a statement that gives leases back (the row is anybody's to claim). */
export const UNLEASED = 'claimed_until = null, claimed_by = null';

/** A row's lease is over or was never taken: `alias` is the deliveries table's. */
export function unleased(alias: string): string {
  return `(${alias}.claimed_until is null or ${alias}.claimed_until < now())`;
}

/** The columns leaseValues() gives values for, in that order. */
export const LEASE_COLUMNS = ['claimed_until', 'claimed_by', 'attempts'] as const;

/**
 * The lease's three values, where the SQL condition `when` holds (null: always): its end, its
 * node, and `attempts` (SQL for the attempts made) counting the attempt about to be made. A row
 * not leased has no lease and keeps its count.
 */
function expressions(when: string | null, attempts: string): string[] {
  const until = `now() + (:ms::int * interval '1 millisecond')`;
  if (when === null) return [until, ':node::text', `${attempts} + 1`];
  return [
    `case when ${when} then ${until} end`,
    `case when ${when} then :node::text end`,
    `${attempts} + case when ${when} then 1 else 0 end`,
  ];
}

function leaseParams(lease: Lease | null): { ms: number; node: string | null } {
  return { ms: lease?.ms ?? 0, node: lease?.node ?? null };
}

/** The values of LEASE_COLUMNS, for an insert's select list. */
export function leaseValues(lease: Lease | null, when: string | null, attempts: string): Sql {
  return named(expressions(when, attempts).join(', '), leaseParams(lease));
}

/** The lease as the set list of an update of the row `alias`. */
export function leaseSet(lease: Lease | null, when: string | null, alias: string): Sql {
  const set = expressions(when, `${alias}.attempts`).map((value, i) => `${LEASE_COLUMNS[i] as string} = ${value}`);
  return named(set.join(', '), leaseParams(lease));
}
