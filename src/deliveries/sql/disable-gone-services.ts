// Services whose webhook answered 410 Gone, switched off until an operator enables them again
// (outcomes.ts); their deliveries stay pending and go out, in order, once it does.
import { named, type Sql } from '../../db/named.ts';
import { pgIntArray } from '../../db/pg-arrays.ts';

/** No rows. */
export function disableGoneServicesSql(serviceIds: readonly number[]): Sql {
  return named(
    `update services set disabled_at = now(), disabled_reason = 'webhook_gone', updated_at = now()
      where id = any(:gone::int[]) and disabled_at is null`,
    { gone: pgIntArray(serviceIds) },
  );
}
