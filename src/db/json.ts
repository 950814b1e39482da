// A json or jsonb column of a raw statement: parsed by the PostgreSQL driver, text where a
// driver leaves it as text.
export function fromJson<T>(value: unknown): T | undefined {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T | undefined;
}
