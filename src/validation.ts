// Typed input for commands, whatever the transport: a zod schema, and every problem of the
// input reported at once (422 validation_failed), each named by its field.
import type { z } from 'zod';
import { validationFailed } from './errors.ts';

/** Checks any input (a socket event's body, say); problems are named under `prefix`. */
export function check<S extends z.ZodType>(schema: S, input: unknown, prefix: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationFailed(
    result.error.issues.map((issue) => ({
      field: [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || prefix,
      detail: issue.message,
    })),
  );
}
