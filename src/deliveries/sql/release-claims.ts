// Gives back claims a node will not attempt (claims.ts): due again at once, the attempt not counted.
import { named, type Sql } from '../../db/named.ts';
import { pgUuidArray } from '../../db/pg-arrays.ts';
import { UNLEASED } from '../lease.ts';

export interface ReleaseClaimsValues {
  node: string;
  ids: readonly string[];
}

/** No rows. */
export function releaseClaimsSql({ node, ids }: ReleaseClaimsValues): Sql {
  return named(
    `update deliveries set ${UNLEASED}, attempts = attempts - 1, updated_at = now()
     where id = any(:ids::uuid[]) and claimed_by = :node and state = 'pending'`,
    { ids: pgUuidArray(ids), node },
  );
}
