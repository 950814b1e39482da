// The Admin API as the dashboard calls it: JSON in, the envelope out (files as they are),
// errors as ApiError with the codes and fields of the envelope's notifications. Only routes of
// /openapi.json.
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
    /** A 429's Retry-After, in seconds; null when the answer had none. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(describe(status, notifications, retryAfterSeconds));
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
  cannot_remove_own_operators_manage:
    'You cannot take operators:manage (everywhere) from yourself. Ask another operator who manages operators.',
  permission_denied: 'You do not have the permission for this.',
  invalid_token: 'Your session has ended. Sign in again.',
  missing_token: 'Sign in first.',
  too_many_requests: 'Too many attempts. Wait a little and try again.',
  no_webhook_url: 'This Service has no webhook URL.',
  delivery_not_dead: 'This delivery is not dead any more.',
  password_sign_in_disabled: 'Sign-in with a password is turned off here: use single sign-on.',
  sso_code_invalid: 'That single sign-on has already been used or is too old. Sign in again.',
  invalid_code: 'That code is not right (or was used already). Try the next code of your authenticator app.',
  invalid_challenge: 'This sign-in took too long. Start again with your email and password.',
  invalid_reset_token: 'This reset link has expired or was used already. Ask for a new one.',
  wrong_password: 'Your current password is not right.',
  two_factor_not_enabled: 'Set up two-factor sign-in for yourself first (Your account).',
  two_factor_already_enabled: 'Two-factor sign-in is on already.',
  two_factor_not_enrolling: 'Start the set-up again: no code is awaited.',
  session_not_found: 'That session has ended already.',
};

/** Why a single sign-on came back refused (the server's #sso-error=<code>). */
const SSO_WORDS: Record<string, string> = {
  email_not_verified: 'Your identity provider has not verified your email address, so it cannot sign you in here.',
  operator_not_found: 'No operator has the email address your identity provider gave. Ask an operator who manages operators to add you.',
  operator_disabled: 'This operator is disabled. Ask an operator who manages operators to enable you.',
  sso_refused: 'The identity provider did not sign you in (declined or cancelled). Try again.',
  sso_failed: 'The sign-in with the identity provider could not be completed. Try again; if it keeps failing, tell your administrator.',
  sso_unavailable: 'The identity provider cannot be reached. Try again later.',
  sso_attempt_expired: 'That sign-in took too long or was started in another browser. Try again.',
  sso_state_mismatch: 'That sign-in answer did not belong to this browser, so it was refused. Try again.',
  sso_grants_invalid:
    'Your operator could not be created: the single sign-on settings name an account that does not exist. Tell your administrator.',
};

export function ssoErrorText(code: string): string {
  return SSO_WORDS[code] ?? 'The single sign-on did not work. Try again.';
}

/** Calls that need no session: their 401 is an answer to show, not a sign-out. */
const OPEN_PATHS = new Set(['/login', '/login/two-factor', '/password-reset', '/sso/exchange']);

/** "45 seconds", "15 minutes": how long a Retry-After asks to wait, rounded up. */
export function waitFor(seconds: number): string {
  if (seconds < 90) return seconds === 1 ? '1 second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}

function describe(status: number, notifications: Notification[], retryAfterSeconds: number | null): string {
  const first = notifications.find((n) => n.type === 'error') ?? notifications[0];
  if (!first) return `The server answered ${status}.`;
  if (first.message === 'too_many_requests' && retryAfterSeconds !== null) {
    return `Too many attempts. Try again in ${waitFor(retryAfterSeconds)}.`;
  }
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

function send(method: string, path: string, headers: Record<string, string>, body?: string | FormData): Promise<Response> {
  const token = session.token;
  if (token) headers.authorization = `Bearer ${token}`;
  return fetch(`/adminApi${path}`, { method, headers, body, credentials: 'omit' });
}

/** The token is refused from now on (a 401, or the live socket ended by the server): back to sign-in. */
export function sessionEnded(): void {
  session.clear();
  onSignedOut();
}

/** The error of a refused call; a refused token also ends the page's session. */
function refusal(response: Response, path: string, envelope: Envelope<unknown> | null): ApiError {
  if (response.status === 401 && !OPEN_PATHS.has(path)) sessionEnded();
  const retryAfter = Number(response.headers.get('retry-after') ?? NaN);
  return new ApiError(response.status, envelope?.notifications ?? [], Number.isInteger(retryAfter) && retryAfter > 0 ? retryAfter : null);
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<Envelope<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return answered<T>(await send(method, path, headers, body === undefined ? undefined : JSON.stringify(body)), path);
}

async function answered<T>(response: Response, path: string): Promise<Envelope<T>> {
  const envelope = (await response.json().catch(() => null)) as Envelope<T> | null;
  if (!response.ok || !envelope) throw refusal(response, path, envelope);
  return envelope;
}

/**
 * A file the Admin API serves as it is (a conversation's upload), with the name its
 * Content-Disposition gives. Fetched rather than linked: only this request carries the token.
 */
export async function download(path: string): Promise<{ blob: Blob; filename: string | null }> {
  const response = await send('GET', path, {});
  if (!response.ok) throw refusal(response, path, (await response.json().catch(() => null)) as Envelope<unknown> | null);
  return { blob: await response.blob(), filename: dispositionName(response.headers.get('content-disposition')) };
}

/** The file name of a Content-Disposition header: RFC 6266's filename* (UTF-8) over filename. */
function dispositionName(header: string | null): string | null {
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header ?? '')?.[1];
  if (extended) {
    try {
      return decodeURIComponent(extended);
    } catch {
      // A malformed escape: the plain filename below still names the file.
    }
  }
  return /filename="([^"]*)"/i.exec(header ?? '')?.[1] ?? null;
}

/** A file sent as multipart/form-data (field `media`), as the upload routes take it. */
async function upload<T>(path: string, file: File): Promise<Envelope<T>> {
  const form = new FormData();
  form.append('media', file, file.name);
  return answered<T>(await send('POST', path, { accept: 'application/json' }, form), path);
}

export const api = {
  upload,
  get: <T>(path: string) => call<T>('GET', path),
  post: <T>(path: string, body?: unknown) => call<T>('POST', path, body ?? {}),
  put: <T>(path: string, body?: unknown) => call<T>('PUT', path, body ?? {}),
  patch: <T>(path: string, body: unknown) => call<T>('PATCH', path, body),
  delete: <T>(path: string) => call<T>('DELETE', path),
};
