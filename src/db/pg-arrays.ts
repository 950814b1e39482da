// PostgreSQL array literals for query parameters: knex would expand a JS array into a list
// of parameters, and one array parameter keeps a statement's text the same whatever its size.

export function pgIntArray(values: readonly number[]): string {
  return `{${values.map((v) => Math.trunc(v)).join(',')}}`;
}

export function pgUuidArray(values: readonly string[]): string {
  return `{${values.join(',')}}`;
}

/** Elements quoted and escaped; null stays NULL. */
export function pgTextArray(values: ReadonlyArray<string | null>): string {
  const quote = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  return `{${values.map((v) => (v === null ? 'NULL' : quote(v))).join(',')}}`;
}
