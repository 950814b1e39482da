// The one response shape of every Palaver answer, success or error (docs/client-api.md, "Errors"),
// as deployed chat clients parse it.
import type { AppError, Notification } from '../errors.ts';

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

/** Where an answer goes back to: the REST path and method, or the socket event that mirrors them. */
export interface Origin {
  path: string;
  method: string;
  startedAt: bigint;
}

export function buildEnvelope(origin: Origin, ok: boolean, parts: EnvelopeParts): Envelope {
  const seconds = Number(process.hrtime.bigint() - origin.startedAt) / 1e9;
  return {
    data: parts.data ?? null,
    notifications: parts.notifications ?? [],
    status: ok ? 'SUCCESS' : 'ERROR',
    metadata: {
      values: { url: origin.path.replace(VERSION_PREFIX, '').replace(/^\/+/, '') },
      method: origin.method.toLowerCase(),
      duration: Math.round(seconds * 1000) / 1000,
    },
    ...parts.extra,
  };
}

/** The notifications of an error answer. */
export function errorNotifications(error: AppError): Notification[] {
  return error.details.length > 0 ? error.details : [{ type: 'error', message: error.code }];
}
