// The rows a statement leases to this node's worker by hand-off (handoff.ts decides how many it
// takes), as pieces of SQL that carry their own values (db/named.ts), with the lease to write.
import { Sql } from '../db/named.ts';
import { leaseSql, roomParams, type HandoffTarget } from './handoff.ts';
import type { Lease } from './lease.ts';

/**
 * Hand-offs (handoff.ts): `leased`, for a select list, true for the rows of `eligible` that the
 * worker has room for (per Service in `order`), and `join`, for the from list, the room per
 * Service it reads, and the worker's `lease`. Each piece carries its own values, wherever the
 * statement puts it.
 */
export function handoffLease(
  target: HandoffTarget | null,
  eligible: string,
  serviceColumn: string,
  order: string,
): { lease: Lease | null; leased: Sql; join: Sql } {
  const sql = leaseSql(eligible, serviceColumn, order);
  // roomParams() lists the select list's value, then the from list's two.
  const [otherwise, services, free] = roomParams(target);
  return {
    lease: target && { node: target.node, ms: target.leaseMs },
    leased: new Sql(sql.leased, [otherwise]),
    join: new Sql(sql.join, [services, free]),
  };
}
