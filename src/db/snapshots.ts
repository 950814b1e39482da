// Plain snapshots of rows read with raw SQL, for hot read paths that need no unit of work
// (the caller of every Client API request): columns become properties by the entities'
// metadata, timestamps become Dates. Snapshots are not managed: changes go through the
// domain functions, which lock and read what they change themselves.
import type { EntitySchema, MetadataStorage } from '@mikro-orm/core';

type Columns = Array<{ property: string; column: string; date: boolean }>;
const columnsOf = new Map<string, Columns>();

export function snapshot<T extends object>(metadata: MetadataStorage, schema: EntitySchema<T>, row: Record<string, unknown>): T {
  const className = schema.meta.className;
  let columns = columnsOf.get(className);
  if (!columns) {
    columns = metadata
      .get<T>(className)
      .props.flatMap((p) => (p.fieldNames?.[0] ? [{ property: p.name, column: p.fieldNames[0], date: p.runtimeType === 'Date' }] : []));
    columnsOf.set(className, columns);
  }
  const out: Record<string, unknown> = {};
  for (const { property, column, date } of columns) {
    const value = row[column];
    out[property] = date && typeof value === 'string' ? new Date(value) : (value ?? null);
  }
  return out as T;
}
