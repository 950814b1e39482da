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

/** A value to look at, and how to name its field: the parent's path and its own key (joined only for a problem). */
interface Pending {
  value: unknown;
  parent: Pending | null;
  key: string;
}

function fieldOf(at: Pending): string {
  const path: string[] = [];
  for (let p: Pending | null = at; p; p = p.parent) path.push(p.key);
  return path.reverse().filter(Boolean).join('.') || 'input';
}

/**
 * Every string (keys included) of a parsed input that is unstorable, by its path; iterative, as
 * input nests deep. Every input a client or Service sends passes here: a field's name is built
 * only for a problem, not for every value looked at.
 */
function unstorableStrings(input: unknown, prefix: string): FieldProblem[] {
  const found: FieldProblem[] = [];
  const pending: Pending[] = [{ value: input, parent: null, key: prefix }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value } = next;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value))
        found.push({
          field: fieldOf(next),
          detail: value.includes('\u0000') ? 'contains a NUL character' : 'is not valid Unicode (a lone surrogate)',
        });
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) pending.push({ value: value[i] as unknown, parent: next, key: String(i) });
    } else if (typeof value === 'object' && value !== null) {
      const prototype = Object.getPrototypeOf(value) as object | null;
      if (prototype !== Object.prototype && prototype !== null) continue;
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        if (UNSTORABLE.test(key)) found.push({ field: fieldOf(next), detail: 'a key contains a NUL character or a lone surrogate' });
        else pending.push({ value: (value as Record<string, unknown>)[key], parent: next, key });
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
