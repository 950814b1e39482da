// FCM HTTP v1: an OAuth2 access token from the account's service account (google-auth-library's
// JWT client: a signed JWT bearer grant, the token cached and refreshed before it expires),
// then POST /v1/projects/{project}/messages:send. Both Google addresses come from the
// configuration, so a test or an air-gapped proxy can stand in for them.
import { createHash } from 'node:crypto';
import type { Got } from 'got';
import { JWT, gaxios } from 'google-auth-library';
import { parseRetryAfter } from '../deliveries/sender.ts';
import type { FcmSettings } from './settings.ts';
import type { PushOutcome } from './outcome.ts';

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';

export interface FcmOptions {
  /** Where the JWT bearer grant is posted (Google: https://oauth2.googleapis.com/token). */
  tokenUrl: string;
  /** Base of the send endpoint (Google: https://fcm.googleapis.com). */
  sendUrl: string;
  timeoutMs: number;
}

export interface FcmMessage {
  token: string;
  /** 2: iOS, which receives FCM through APNs and needs the APNs keys to wake or alert. */
  deviceType: number;
  /** The data map (string values only, as FCM requires). */
  data: Record<string, string>;
}

/** FCM's error body: google.rpc.Status with FcmError and BadRequest details. */
interface FcmErrorBody {
  error?: {
    status?: string;
    message?: string;
    details?: Array<{ errorCode?: string; fieldViolations?: Array<{ field?: string }> }>;
  };
}

export class FcmClient {
  /** One JWT client per service account (it holds the cached access token). */
  private readonly clients = new Map<string, JWT>();
  private readonly transporter: gaxios.Gaxios;

  constructor(
    private readonly options: FcmOptions,
    private readonly http: Got,
  ) {
    // google-auth-library posts the grant to Google's fixed address; the request is pointed at
    // the configured one here, the assertion (audience Google's token URL) left as it is. No
    // retries of its own: the outbox's schedule retries the push. Node's own fetch, not the
    // node-fetch gaxios loads by default: when gaxios' timeout fired at the wrong moment (a busy
    // event loop), node-fetch threw its AbortError outside any promise, and the process died.
    this.transporter = new gaxios.Gaxios({ timeout: options.timeoutMs, retry: false, fetchImplementation: fetch });
    this.transporter.interceptors.request.add({
      resolved: (config) => {
        if (config.url.href === GOOGLE_TOKEN_URL) config.url = new URL(options.tokenUrl);
        // The library asks gaxios to retry its grant (retryConfig): none here.
        config.retry = false;
        config.retryConfig = { retry: 0 };
        return Promise.resolve(config);
      },
    });
  }

  async send(settings: FcmSettings, message: FcmMessage): Promise<PushOutcome> {
    const client = this.client(settings);
    let accessToken: string | null | undefined;
    try {
      accessToken = (await client.getAccessToken()).token;
    } catch (err) {
      // Google unreachable, or the credentials refused (the operator may fix them): retried.
      return { kind: 'retry', status: null, error: `FCM access token: ${describe(err)}`, retryAfterMs: null };
    }
    if (!accessToken) return { kind: 'retry', status: null, error: 'FCM access token: none returned', retryAfterMs: null };
    const url = `${this.options.sendUrl.replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(settings.projectId)}/messages:send`;
    const response = await this.http.post(url, {
      headers: { authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ message: fcmMessage(message) }),
    });
    const status = response.statusCode;
    if (status >= 200 && status < 300) return { kind: 'delivered', status };
    const body = parseError(response.body);
    const reason = body.error?.details?.find((d) => d.errorCode)?.errorCode ?? body.error?.status ?? `HTTP ${status}`;
    const error = `FCM ${status} ${reason}: ${body.error?.message ?? ''}`.trim();
    if (tokenRefused(status, body)) return { kind: 'unregistered', status, error };
    if (status === 401) {
      // Our access token was refused (revoked, or expired early): a fresh one next time.
      this.clients.delete(key(settings));
      return { kind: 'retry', status, error, retryAfterMs: null };
    }
    if (status === 408 || status === 429 || status >= 500) {
      const retryAfter = response.headers['retry-after'];
      return { kind: 'retry', status, error, retryAfterMs: parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : undefined) };
    }
    return { kind: 'failed', status, error };
  }

  private client(settings: FcmSettings): JWT {
    const id = key(settings);
    let client = this.clients.get(id);
    if (!client) {
      client = new JWT({ email: settings.clientEmail, key: settings.privateKey, scopes: [SCOPE], transporter: this.transporter });
      this.clients.set(id, client);
    }
    return client;
  }
}

/** The v1 message: data only for Android (the app builds its notification); for iOS the APNs keys. */
function fcmMessage(message: FcmMessage) {
  const isMessage = message.data.message !== undefined;
  return {
    token: message.token,
    data: message.data,
    android: { priority: 'high' },
    ...(message.deviceType === 2
      ? {
          apns: isMessage
            ? { payload: { aps: { alert: { body: message.data.message }, sound: 'default', 'mutable-content': 1 } } }
            : // Typing events: a silent, background push.
              { headers: { 'apns-push-type': 'background', 'apns-priority': '5' }, payload: { aps: { 'content-available': 1 } } },
        }
      : {}),
  };
}

/** UNREGISTERED (404), or INVALID_ARGUMENT about the token itself: the token will never work again. */
function tokenRefused(status: number, body: FcmErrorBody): boolean {
  const details = body.error?.details ?? [];
  if (details.some((d) => d.errorCode === 'UNREGISTERED')) return true;
  if (status !== 400) return false;
  const aboutToken = details.some((d) => d.fieldViolations?.some((v) => v.field === 'message.token'));
  return aboutToken || /registration token/i.test(body.error?.message ?? '');
}

function parseError(text: string): FcmErrorBody {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

function key(settings: FcmSettings): string {
  return createHash('sha256').update(`${settings.clientEmail}\n${settings.privateKey}`).digest('hex');
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
