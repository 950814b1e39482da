// Typed input for commands, whatever the transport: a zod schema, and every problem of the
// input reported at once (422 validation_failed), each named by its field.
import type { z } from 'zod';
import { validationFailed, type FieldProblem } from './errors.ts';

/**
 * A string no database text takes (NUL) or that is not Unicode (a lone surrogate): refused
 * here, named by its field, before any SQL sees it (PostgreSQL would fail with 22P05/08P01, or
 * silently store U+FFFD).
 */
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Every string (keys included) of a parsed input that is unstorable, by its path; iterative, as input nests deep. */
function unstorableStrings(input: unknown, prefix: string): FieldProblem[] {
  const found: FieldProblem[] = [];
  const pending: Array<[unknown, string[]]> = [[input, [prefix]]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, path] = next;
    const field = path.filter(Boolean).join('.') || 'input';
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value))
        found.push({ field, detail: value.includes('\u0000') ? 'contains a NUL character' : 'is not valid Unicode (a lone surrogate)' });
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => pending.push([item, [...path, String(i)]]));
    } else if (
      typeof value === 'object' &&
      value !== null &&
      [Object.prototype, null].includes(Object.getPrototypeOf(value) as object | null)
    ) {
      for (const [key, item] of Object.entries(value)) {
        if (UNSTORABLE.test(key)) found.push({ field, detail: 'a key contains a NUL character or a lone surrogate' });
        else pending.push([item, [...path, key]]);
      }
    }
  }
  return found.reverse();
}

/** Refuses (422, like check()) input that is not parsed by a schema but stored, say an upload's file name. */
export function checkStorable(input: unknown, prefix: string): void {
  const unstorable = unstorableStrings(input, prefix);
  if (unstorable.length > 0) throw validationFailed(unstorable);
}

/**
 * Checks any input (a socket event's body, say); problems are named under `prefix`.
 * Every string of the parsed result (what a command gets, so metadata a schema cleans, like
 * the page address with its NUL bytes dropped, passes) must be storable: NUL characters and
 * lone surrogates are problems of their fields. They are looked for once the schema passes.
 */
export function check<S extends z.ZodType>(schema: S, input: unknown, prefix: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) {
    checkStorable(result.data, prefix);
    return result.data;
  }
  throw validationFailed(
    result.error.issues.map((issue) => ({
      field: [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || prefix,
      detail: issue.message,
    })),
  );
}
