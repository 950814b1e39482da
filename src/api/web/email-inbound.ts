// POST /email/inbound: replies by email from a hosted mail provider's inbound route (docs/
// operations.md "Replies by email"), for operators who do not run the SMTP listener. On only
// with `email.inbound.webhookSecret`; 404 otherwise, as if there were no route. The raw message
// (RFC 822) comes as:
//   - the body itself, `Content-Type: message/rfc822` (a relay of your own: a Cloudflare Email
//     Worker, an MTA's pipe), authenticated by `X-Palaver-Signature: sha256=<hex HMAC-SHA-256
//     of the body under the secret>` or by the secret as below;
//   - a multipart/form-data field `email` (SendGrid Inbound Parse with "POST the raw, full MIME
//     message") or `body-mime` (Mailgun's forward to a URL ending in `mime`);
//   - a JSON field `RawEmail` (Postmark with raw content included) or `raw`;
// the last two authenticated by the secret as `Authorization: Bearer <secret>` or as the
// password of Basic authentication (a URL `https://inbound:<secret>@chat.example.com/email/inbound`).
// The envelope's recipients are read from SendGrid's `envelope`, Mailgun's `recipient`, Postmark's
// `OriginalRecipient` when present; otherwise from the message's own headers.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { koaBody } from 'koa-body';
import type { InboundMail, InboundOutcome } from '../../email/inbound.ts';
import { AppError, notFound, payloadTooLarge, tooManyRequests, unauthorized } from '../../errors.ts';
import { refuseDeclaredLength } from '../../http/middleware/body.ts';
import { respond } from '../../http/respond.ts';
import type { AppContext, AppRouter } from '../../http/types.ts';

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The secret as a bearer token or a Basic password. */
function secretGiven(ctx: AppContext, secret: string): boolean {
  const header = ctx.get('authorization');
  const bearer = /^Bearer\s+(.+)$/i.exec(header);
  if (bearer) return same(bearer[1] as string, secret);
  const basic = /^Basic\s+(.+)$/i.exec(header);
  if (basic) {
    const decoded = Buffer.from(basic[1] as string, 'base64').toString('utf8');
    return same(decoded.slice(decoded.indexOf(':') + 1), secret);
  }
  return false;
}

async function readRaw(ctx: AppContext, maxBytes: number): Promise<Buffer> {
  refuseDeclaredLength(ctx, maxBytes);
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw payloadTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function field(value: unknown): string | undefined {
  if (Array.isArray(value)) return field(value[0]);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The envelope recipients providers send beside the message, if any. */
function envelopeOf(fields: Record<string, unknown>): string[] | null {
  const sendgrid = field(fields.envelope);
  if (sendgrid) {
    try {
      const to = (JSON.parse(sendgrid) as { to?: unknown }).to;
      if (Array.isArray(to)) return to.filter((a): a is string => typeof a === 'string');
    } catch {
      // Not JSON: fall back to the message's headers.
    }
  }
  const single = field(fields.recipient) ?? field(fields.OriginalRecipient);
  return single ? single.split(',').map((a) => a.trim()) : null;
}

function answer(ctx: AppContext, outcome: InboundOutcome): void {
  if (outcome.kind === 'refused') throw new AppError(422, 'reply_address_invalid');
  if (outcome.kind === 'limited') throw tooManyRequests(outcome.retryAfterSeconds);
  respond(ctx, {
    data:
      outcome.kind === 'written' ? { outcome: 'written', messageIds: outcome.messageIds } : { outcome: 'dropped', reason: outcome.reason },
  });
}

export function emailInboundRoutes(router: AppRouter): void {
  router.post('/email/inbound', async (ctx) => {
    const secret = ctx.deps.config.email.inbound.webhookSecret;
    const inbound: InboundMail | undefined = ctx.deps.inbound;
    if (!secret || !inbound) throw notFound('route_not_found');
    if (ctx.request.is('message/rfc822', 'application/octet-stream')) {
      const signature = ctx.get('x-palaver-signature');
      // Without a signature the secret must be given; the body is read only for a caller who may send it.
      if (!signature && !secretGiven(ctx, secret)) throw unauthorized('inbound_unauthorized');
      const raw = await readRaw(ctx, inbound.maxBytes);
      if (signature && !same(signature, `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`))
        throw unauthorized('inbound_signature_invalid');
      return answer(ctx, await inbound.receive(raw, null));
    }
    if (!secretGiven(ctx, secret)) throw unauthorized('inbound_unauthorized');
    let fields: Record<string, unknown>;
    if (ctx.request.is('multipart')) {
      refuseDeclaredLength(ctx, inbound.maxBytes + 64 * 1024);
      // Fields only: a provider's separate attachment parts are refused, 422 (send the raw MIME instead).
      try {
        await koaBody({ multipart: true, urlencoded: false, json: false, formidable: { maxFiles: 0, maxFieldsSize: inbound.maxBytes } })(
          ctx,
          () => Promise.resolve(),
        );
      } catch (err) {
        // formidable's refusals: a file part (1015, maxFiles), fields over the limit (413), a broken body.
        const { code, httpCode } = err as { code?: number; httpCode?: number };
        if (code === 1015) throw new AppError(422, 'file_parts_not_accepted');
        if (httpCode === 413) throw payloadTooLarge();
        throw new AppError(400, 'invalid_multipart');
      }
      fields = (ctx.request.body ?? {}) as Record<string, unknown>;
    } else if (ctx.request.is(ctx.state.jsonTypes ?? ['json'])) {
      fields = (ctx.request.body ?? {}) as Record<string, unknown>;
    } else {
      throw new AppError(415, 'unsupported_media_type');
    }
    const raw = field(fields.email) ?? field(fields['body-mime']) ?? field(fields.RawEmail) ?? field(fields.raw);
    if (!raw) throw new AppError(422, 'raw_message_missing');
    return answer(ctx, await inbound.receive(Buffer.from(raw, 'utf8'), envelopeOf(fields)));
  });
}
