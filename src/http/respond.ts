// The envelope (presenters/envelope.ts) as a Koa answer: the request's path and method name
// where the answer goes back to.
import type { Context } from 'koa';
import { buildEnvelope, type Envelope, type EnvelopeParts } from '../presenters/envelope.ts';

export function envelope(ctx: Context, ok: boolean, parts: EnvelopeParts): Envelope {
  const startedAt = (ctx.state as { startedAt?: bigint }).startedAt ?? process.hrtime.bigint();
  return buildEnvelope({ path: ctx.path, method: ctx.method, startedAt }, ok, parts);
}

/** Answers a successful call. */
export function respond(ctx: Context, parts: EnvelopeParts, status = 200): void {
  ctx.status = status;
  ctx.body = envelope(ctx, true, parts);
}
