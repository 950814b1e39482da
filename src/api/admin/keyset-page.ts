// A page of a list read newest first by keyset (`before`): the next page starts after the last
// row shown, and a page shorter than the limit asked for is the last one.
import { respond } from '../../http/respond.ts';
import type { AppContext } from '../../http/types.ts';

/** Answers the rows, presented, with `paging.before`: the last row's key when the page is full, else null. */
export function respondPage<T>(
  ctx: AppContext,
  rows: readonly T[],
  limit: number,
  present: (row: T) => unknown,
  keyOf: (row: T) => string | number,
): void {
  const last = rows.length === limit ? rows[rows.length - 1] : undefined;
  respond(ctx, { data: rows.map((row) => present(row)), extra: { paging: { before: last === undefined ? null : keyOf(last) } } });
}
