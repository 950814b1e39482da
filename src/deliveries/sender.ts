// One webhook attempt: a signed POST of the stored body, over keep-alive connections, no
// redirects, a hard timeout, and (unless allowed) no connection to non-public addresses,
// checked on the resolved IP so DNS rebinding does not get through.
import http from 'node:http';
import https from 'node:https';
import got, { RequestError, type Got, type PlainResponse } from 'got';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { Webhook } from 'standardwebhooks';

export type Outcome =
  | { kind: 'delivered'; status: number }
  /** Worth another attempt: timeouts, connection errors, 408, 429 and 5xx. */
  | { kind: 'retry'; status: number | null; error: string; retryAfterMs: number | null }
  /** The receiver refused the payload (other 4xx, or a redirect): no retry. */
  | { kind: 'failed'; status: number; error: string }
  /** 410 Gone: the endpoint is gone, the Service's webhook is switched off. */
  | { kind: 'gone'; status: 410; error: string };

export interface SenderOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  maxSockets: number;
}

export interface WebhookRequest {
  url: string;
  id: string;
  body: string;
  /** The current secret first; during a rotation's grace period also the previous one. */
  secrets: string[];
  /** A push webhook behind OAuth: `Bearer <access token>`. */
  authorization?: string | undefined;
}

/** The start of an answer being read (sendReadingAnswer). */
interface Answer {
  chunks: Buffer[];
  bytes: number;
  maxBytes: number;
  answered: boolean;
}

const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;

/** Retry-After as seconds or as an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(ms)) return null;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

export function classify(status: number, retryAfter: string | undefined): Outcome {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 410) return { kind: 'gone', status, error: 'HTTP 410 Gone: webhook disabled' };
  if (status === 408 || status === 429 || status >= 500) {
    return { kind: 'retry', status, error: `HTTP ${status}`, retryAfterMs: parseRetryAfter(retryAfter) };
  }
  const what = status >= 300 && status < 400 ? 'redirect (not followed)' : 'refused';
  return { kind: 'failed', status, error: `HTTP ${status}: ${what}` };
}

export class WebhookSender {
  private readonly client: Got;
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly signers = new Map<string, Webhook>();

  constructor(options: SenderOptions) {
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets };
    this.agents = options.allowPrivate
      ? { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) }
      : {
          http: new RequestFilteringHttpAgent({ ...agentOptions, allowPrivateIPAddress: false }),
          https: new RequestFilteringHttpsAgent({ ...agentOptions, allowPrivateIPAddress: false }),
        };
    this.client = got.extend({
      agent: this.agents,
      timeout: { request: options.timeoutMs },
      followRedirect: false,
      retry: { limit: 0 },
      throwHttpErrors: false,
      // The answer's body is never read: no Accept-Encoding, and no decompression stream a request.
      decompress: false,
      headers: { 'user-agent': 'Palaver-Webhooks/1', 'content-type': 'application/json' },
    });
  }

  send(request: WebhookRequest): Promise<Outcome> {
    return this.post(request, null);
  }

  /**
   * As send(), and the start of the receiver's answer too, at most `maxBytes` of it (read as
   * UTF-8): for the dashboard's test event, which shows what the receiver said.
   */
  async sendReadingAnswer(request: WebhookRequest, maxBytes: number): Promise<{ outcome: Outcome; answer: string | null }> {
    const answer: Answer = { chunks: [], bytes: 0, maxBytes, answered: false };
    const outcome = await this.post(request, answer);
    return { outcome, answer: answer.answered ? Buffer.concat(answer.chunks).toString('utf8') : null };
  }

  private post(request: WebhookRequest, answer: Answer | null): Promise<Outcome> {
    const timestamp = new Date();
    // Standard Webhooks: several space-separated signatures; a receiver accepts any it can verify.
    const signature = request.secrets.map((secret) => this.signer(secret).sign(request.id, timestamp, request.body)).join(' ');
    // got's stream interface, not its promise: the answer's body is never read, and the promise
    // interface buffers it and wraps the request in more objects (about 70 µs of CPU a webhook,
    // a third of got's cost: docs/performance.md). The stream is drained so that its connection
    // goes back to the pool, and the request timeout runs until the answer's end.
    return new Promise((resolve) => {
      let outcome: Outcome | undefined;
      const stream = this.client.stream.post(request.url, {
        body: request.body,
        headers: {
          'webhook-id': request.id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signature,
          ...(request.authorization ? { authorization: request.authorization } : {}),
        },
      });
      stream.once('response', (response: PlainResponse) => {
        const retryAfter = response.headers['retry-after'];
        outcome = classify(response.statusCode, typeof retryAfter === 'string' ? retryAfter : undefined);
        if (answer) {
          answer.answered = true;
          stream.on('data', (chunk: Buffer) => {
            if (answer.bytes < answer.maxBytes) answer.chunks.push(chunk.subarray(0, answer.maxBytes - answer.bytes));
            answer.bytes += chunk.length;
          });
        }
      });
      // Timeouts, refused or reset connections (before or during the answer), DNS failures and
      // refused addresses: all may heal (a deploy ends, DNS changes), so they are retried on the
      // schedule. The first of 'error' and 'end' settles the attempt.
      stream.once('error', (err: unknown) => {
        const error = err instanceof RequestError ? `${err.code}: ${err.message}` : String(err);
        resolve({ kind: 'retry', status: null, error, retryAfterMs: null });
      });
      stream.once('end', () => resolve(outcome ?? { kind: 'retry', status: null, error: 'no answer', retryAfterMs: null }));
      stream.resume();
    });
  }

  /** The same agents (SSRF filter included) for other requests to customers' endpoints: OAuth token URLs. */
  get agent(): { http: http.Agent; https: https.Agent } {
    return this.agents;
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private signer(secret: string): Webhook {
    let signer = this.signers.get(secret);
    if (!signer) {
      signer = new Webhook(secret);
      this.signers.set(secret, signer);
    }
    return signer;
  }
}
