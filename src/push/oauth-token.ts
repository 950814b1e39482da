// Access tokens for push webhooks behind OAuth: the client-credentials grant (RFC 6749 §4.4)
// at the account's token URL, client authenticated with HTTP Basic (which every authorization
// server must accept), each token cached until shortly before it expires. Concurrent pushes
// share one token request.
import type { Got } from 'got';
import type { OAuthWebhookSettings } from './settings.ts';

/** A token is not used in its last seconds, so it does not expire in flight. */
const EXPIRY_MARGIN_MS = 30_000;

export class OAuthTokenError extends Error {}

interface Cached {
  token: Promise<string>;
  /** Unknown until the answer is in; Infinity while it is pending. */
  expiresAt: number;
}

export class OAuthTokens {
  private readonly cache = new Map<string, Cached>();

  /** `http` carries the SSRF filter: a token URL is a customer's address like a webhook's. */
  constructor(private readonly http: Got) {}

  async token(settings: OAuthWebhookSettings): Promise<string> {
    const id = key(settings);
    const cached = this.cache.get(id);
    if (cached && cached.expiresAt > Date.now()) return cached.token;
    const entry: Cached = { token: Promise.resolve(''), expiresAt: Infinity };
    entry.token = this.fetch(settings).then(
      ({ token, expiresInMs }) => {
        // Without expires_in the token is used for this push only.
        entry.expiresAt = expiresInMs === null ? 0 : Date.now() + expiresInMs - EXPIRY_MARGIN_MS;
        return token;
      },
      (err: unknown) => {
        this.cache.delete(id);
        throw err;
      },
    );
    this.cache.set(id, entry);
    return entry.token;
  }

  /** The webhook refused the token (401): the next push asks for a new one. */
  forget(settings: OAuthWebhookSettings): void {
    this.cache.delete(key(settings));
  }

  private async fetch(settings: OAuthWebhookSettings): Promise<{ token: string; expiresInMs: number | null }> {
    const form: Record<string, string> = { grant_type: 'client_credentials' };
    if (settings.scope) form.scope = settings.scope;
    const basic = Buffer.from(`${encodeURIComponent(settings.clientId)}:${encodeURIComponent(settings.clientSecret)}`).toString('base64');
    const response = await this.http.post(settings.tokenUrl, {
      form,
      headers: { authorization: `Basic ${basic}`, accept: 'application/json' },
    });
    if (response.statusCode !== 200) throw new OAuthTokenError(`OAuth token URL answered HTTP ${response.statusCode}`);
    let body: { access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(response.body) as typeof body;
    } catch {
      throw new OAuthTokenError('OAuth token URL answered no JSON');
    }
    if (typeof body.access_token !== 'string' || body.access_token === '')
      throw new OAuthTokenError('OAuth token answer has no access_token');
    const expiresIn = Number(body.expires_in);
    return { token: body.access_token, expiresInMs: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : null };
  }
}

function key(settings: OAuthWebhookSettings): string {
  return JSON.stringify([settings.tokenUrl, settings.clientId, settings.clientSecret, settings.scope]);
}
