// The one place that turns a thrown error into an answer. Known errors keep their code and
// status; driver and parser errors are told apart by class, SQLSTATE or `type`, never by
// message text; anything else is logged and hidden behind a generic 500.
import type { Middleware } from 'koa';
import { DriverException } from '@mikro-orm/core';
import { AppError, payloadTooLarge, badRequest, unsupportedMediaType } from '../errors.ts';
import { envelope, errorNotifications } from '../envelope.ts';
import type { AppContextExtras, AppState } from '../types.ts';

interface HttpishError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
}

/** Errors raised by body parsing (raw-body, co-body) carry a status and a `type`. */
function fromParser(err: unknown): AppError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as HttpishError;
  const status = e.status ?? e.statusCode;
  if (e.type === 'entity.too.large' || status === 413) return payloadTooLarge();
  if (e.type === 'encoding.unsupported' || status === 415) return unsupportedMediaType('unsupported_encoding');
  if (err instanceof SyntaxError && status === 400) return badRequest('invalid_json');
  if (e.type === 'request.aborted') return badRequest('request_aborted');
  if (e.type === 'request.size.invalid') return badRequest('invalid_content_length');
  return undefined;
}

/** SQLSTATE class 22 (data exception) and 23 (integrity) from a client's values are the client's fault. */
function fromDatabase(err: unknown): AppError | undefined {
  if (!(err instanceof DriverException)) return undefined;
  const code = (err as DriverException & { code?: string }).code ?? '';
  if (code === '23505') return new AppError(409, 'already_exists');
  // A reference to something that does not exist (say, a grant on an unknown account).
  if (code === '23503') return new AppError(422, 'invalid_reference');
  if (code.startsWith('22')) return badRequest('invalid_value');
  return undefined;
}

/** Any thrown error as the AppError a client is answered with; null for faults of ours (500). */
export function knownError(err: unknown): AppError | null {
  return err instanceof AppError ? err : (fromParser(err) ?? fromDatabase(err) ?? null);
}

export function errorHandler(): Middleware<AppState, AppContextExtras> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const known = knownError(err);
      const answer = known ?? new AppError(500, 'internal_error');
      if (!known) ctx.state.log.error({ err }, 'unhandled error');
      else if (known.status >= 500) ctx.state.log.error({ err: known.cause ?? known, code: known.code }, 'request failed');
      ctx.status = answer.status;
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
      ctx.body = envelope(ctx, false, { data: answer.data, notifications: errorNotifications(answer) });
    }
  };
}
