// The one response shape of every Palaver answer, success or error (DESIGN.md section 2),
// as deployed chat clients parse it (shared/reference/parley-web-library).
import type { Context } from 'koa';

export interface Notification {
  type: 'success' | 'warning' | 'error';
  message: string;
  field?: string;
  detail?: string;
}

export interface Envelope {
  data: unknown;
  notifications: Notification[];
  status: 'SUCCESS' | 'ERROR';
  metadata: {
    values: { url: string };
    method: string;
    duration: number;
  };
  [extra: string]: unknown;
}

export interface EnvelopeParts {
  data?: unknown;
  notifications?: Notification[];
  /** Root-level keys some answers carry beside `data` (paging, agent, welcomeMessage…). */
  extra?: Record<string, unknown>;
}

// Clients address the same resource under several API version prefixes; `url` names the resource.
const VERSION_PREFIX = /^\/(?:clientApi\/v\d+(?:\.\d+)?|serviceApi\/v\d+(?:\.\d+)?)(?=\/)/;

export function envelope(ctx: Context, ok: boolean, parts: EnvelopeParts): Envelope {
  const startedAt = (ctx.state as { startedAt?: bigint }).startedAt ?? process.hrtime.bigint();
  const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
  return {
    data: parts.data ?? null,
    notifications: parts.notifications ?? [],
    status: ok ? 'SUCCESS' : 'ERROR',
    metadata: {
      values: { url: ctx.path.replace(VERSION_PREFIX, '').replace(/^\/+/, '') },
      method: ctx.method.toLowerCase(),
      duration: Math.round(seconds * 1000) / 1000,
    },
    ...parts.extra,
  };
}

/** Answers a successful call. */
export function respond(ctx: Context, parts: EnvelopeParts, status = 200): void {
  ctx.status = status;
  ctx.body = envelope(ctx, true, parts);
}
