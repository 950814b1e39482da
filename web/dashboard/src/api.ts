// The Admin API as the dashboard calls it: JSON in, the envelope out, errors as ApiError with
// the codes and fields of the envelope's notifications. Only routes of /openapi.json.
import { session } from './session.ts';

export interface Notification {
  type: 'success' | 'warning' | 'error';
  message: string;
  field?: string;
  detail?: string;
}

export interface Envelope<T> {
  data: T;
  notifications: Notification[];
  status: 'SUCCESS' | 'ERROR';
  [extra: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly notifications: Notification[],
  ) {
    super(describe(status, notifications));
  }

  /** Problems of one field of a form (422 validation_failed names them). */
  fieldErrors(): Map<string, string> {
    const map = new Map<string, string>();
    for (const n of this.notifications) if (n.field) map.set(n.field.split('.')[0] ?? n.field, n.detail ?? n.message);
    return map;
  }
}

const WORDS: Record<string, string> = {
  invalid_credentials: 'Wrong email or password.',
  operator_disabled: 'This operator is disabled. Ask an operator who manages operators to enable you.',
  cannot_disable_self: 'You cannot disable yourself.',
  permission_denied: 'You do not have the permission for this.',
  invalid_token: 'Your session has ended. Sign in again.',
  missing_token: 'Sign in first.',
  too_many_requests: 'Too many attempts. Wait a little and try again.',
  no_webhook_url: 'This Service has no webhook URL.',
  delivery_not_dead: 'This delivery is not dead any more.',
};

function describe(status: number, notifications: Notification[]): string {
  const first = notifications.find((n) => n.type === 'error') ?? notifications[0];
  if (!first) return `The server answered ${status}.`;
  const words = WORDS[first.message];
  if (words) return words;
  const fields = notifications.filter((n) => n.field).map((n) => `${n.field}: ${n.detail ?? n.message}`);
  return fields.length > 0 ? fields.join('; ') : first.message.replace(/_/g, ' ');
}

/** Called when the token is refused: the app goes back to the sign-in page. */
let onSignedOut: () => void = () => undefined;
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<Envelope<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const token = session.token;
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`/adminApi${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
  });
  const envelope = (await response.json().catch(() => null)) as Envelope<T> | null;
  if (!response.ok || !envelope) {
    const error = new ApiError(response.status, envelope?.notifications ?? []);
    if (response.status === 401 && path !== '/login') {
      session.clear();
      onSignedOut();
    }
    throw error;
  }
  return envelope;
}

export const api = {
  get: <T>(path: string) => call<T>('GET', path),
  post: <T>(path: string, body?: unknown) => call<T>('POST', path, body ?? {}),
  put: <T>(path: string, body?: unknown) => call<T>('PUT', path, body ?? {}),
  patch: <T>(path: string, body: unknown) => call<T>('PATCH', path, body),
  delete: <T>(path: string) => call<T>('DELETE', path),
};
