// The one place that turns a thrown error of a request into an answer. Known errors keep their
// code and status (errors.ts); body-parser errors are told apart by `type` or status, never by
// message text; anything else is logged and hidden behind a generic 500.
import type { Middleware } from 'koa';
import { AppError, badRequest, knownError, payloadTooLarge, unsupportedMediaType } from '../../errors.ts';
import { errorNotifications } from '../../presenters/envelope.ts';
import { envelope } from '../respond.ts';
import type { AppContextExtras, AppState } from '../types.ts';

interface HttpishError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  code?: unknown;
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
  // A body whose Content-Encoding does not decode: zlib's Z_DATA_ERROR, Z_BUF_ERROR, …, and
  // brotli's decoder errors, which Node names ERR__ERROR_FORMAT_… .
  if (typeof e.code === 'string' && /^(Z_|ERR__ERROR_|ERR_BROTLI)/.test(e.code)) return badRequest('invalid_encoding');
  return undefined;
}

/** Any thrown error of a request as the AppError it is answered with; null for faults of ours. */
function requestError(err: unknown): AppError | null {
  // An AppError carries a status too: it must not be read as a parser's.
  if (err instanceof AppError) return err;
  return fromParser(err) ?? knownError(err);
}

/** A catch() on the chain's promise rather than an async function around it: one promise a request, not two. */
export function errorHandler(): Middleware<AppState, AppContextExtras> {
  return (ctx, next) =>
    next().catch((err: unknown) => {
      const known = requestError(err);
      const answer = known ?? new AppError(500, 'internal_error');
      if (!known) ctx.state.log.error({ err }, 'unhandled error');
      // A 503 is a refusal chosen under load (server_busy, a busy conversation): the access log has
      // it; an error line for each would only add to the load.
      else if (known.status >= 500 && known.status !== 503)
        ctx.state.log.error({ err: known.cause ?? known, code: known.code }, 'request failed');
      ctx.status = answer.status;
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
      // Refused before the body was read (a declared length, a quota, a file over its cap):
      // the connection closes after the answer rather than reading the rest to reuse it.
      if (!ctx.req.complete) ctx.set('connection', 'close');
      ctx.body = envelope(ctx, false, { data: answer.data, notifications: errorNotifications(answer) });
    });
}
