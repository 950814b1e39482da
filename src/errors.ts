// Errors a caller can act on: a stable snake_case code and a status (HTTP's, which socket
// acknowledgements carry too). Commands throw them whatever the transport; anything else that
// escapes is a fault of ours and becomes a generic 500 (knownError says which is which).
import { DriverException } from '@mikro-orm/core';

/** One line of an answer's `notifications`: a code, and for invalid input the field and why. */
export interface Notification {
  type: 'success' | 'warning' | 'error';
  message: string;
  field?: string;
  detail?: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly details: Notification[] = [],
    readonly data: unknown = null,
    readonly headers: Record<string, string> = {},
    /** For our own faults with a code of their own (5xx): what went wrong, for the log only. */
    cause?: unknown,
  ) {
    super(code, cause === undefined ? undefined : { cause });
    this.name = 'AppError';
  }
}

export interface FieldProblem {
  field: string;
  detail: string;
}

export const badRequest = (code: string) => new AppError(400, code);
export const unauthorized = (code = 'unauthorized') => new AppError(401, code, [], null, { 'www-authenticate': 'Bearer' });
export const forbidden = (code = 'forbidden') => new AppError(403, code);
export const notFound = (code = 'not_found') => new AppError(404, code);
export const methodNotAllowed = (allowed: string[]) => new AppError(405, 'method_not_allowed', [], null, { allow: allowed.join(', ') });
export const conflict = (code: string) => new AppError(409, code);
export const payloadTooLarge = (code = 'payload_too_large') => new AppError(413, code);
export const unsupportedMediaType = (code = 'unsupported_media_type') => new AppError(415, code);
export const tooManyRequests = (retryAfterSeconds: number) =>
  new AppError(429, 'too_many_requests', [], null, { 'retry-after': String(retryAfterSeconds) });

/** Every problem of a request body at once, so a client can fix them in one go. */
export const validationFailed = (problems: FieldProblem[]) =>
  new AppError(
    422,
    'validation_failed',
    problems.map(({ field, detail }) => ({ type: 'error', message: 'validation_failed', field, detail })),
  );

/** SQLSTATE class 22 (data exception) and 23 (integrity) from a caller's values are the caller's fault. */
function fromDatabase(err: unknown): AppError | undefined {
  if (!(err instanceof DriverException)) return undefined;
  const code = (err as DriverException & { code?: string }).code ?? '';
  if (code === '23505') return new AppError(409, 'already_exists');
  // A reference to something that does not exist (say, a grant on an unknown account).
  if (code === '23503') return new AppError(422, 'invalid_reference');
  // A value no column takes (a NUL, a number out of range): the input's fault, like any invalid field.
  if (code.startsWith('22')) return new AppError(422, 'invalid_value');
  return undefined;
}

/** Any thrown error as the AppError a caller is answered with; null for faults of ours (500). */
export function knownError(err: unknown): AppError | null {
  return err instanceof AppError ? err : (fromDatabase(err) ?? null);
}
