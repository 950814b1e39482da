// A real OpenID provider on loopback (the `oidc-provider` package) for the single sign-on tests,
// with its development login and consent pages: any login is accepted, and the login typed is
// the account. Its email is the login itself; a login starting `unverified` has
// `email_verified: false`, every other one `true`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface LoopbackProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Serves the provider once Palaver's redirect URI is known. */
  configure(redirectUri: string): void;
  close(): Promise<void>;
}

export async function startOidcProvider(): Promise<LoopbackProvider> {
  const server: Server = createServer((_req, res) => {
    res.statusCode = 503;
    res.end('not configured yet');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'palaver-dashboard';
  const clientSecret = 'a client secret long enough for HS256 and then some';
  return {
    issuer,
    clientId,
    clientSecret,
    configure(redirectUri) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code'],
            response_types: ['code'],
          },
        ],
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        pkce: { required: () => true },
        findAccount: (_ctx, id) => ({
          accountId: id,
          claims: () => ({ sub: id, email: id, email_verified: !id.startsWith('unverified') }),
        }),
      });
      provider.on('server_error', (_ctx, err) => console.error('oidc-provider:', err));
      server.removeAllListeners('request');
      server.on('request', provider.callback());
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Cookies as a browser keeps them: per origin and path, gone at Max-Age=0. */
class CookieJar {
  private cookies: Array<{ origin: string; name: string; value: string; path: string }> = [];

  take(url: URL, response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const [name = '', ...rest] = pair.split('=');
      const path = attributes.find((a) => /^path=/i.test(a))?.slice(5) ?? '/';
      const gone = attributes.some((a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) < Date.now()));
      this.cookies = this.cookies.filter((c) => !(c.origin === url.origin && c.name === name && c.path === path));
      if (!gone) this.cookies.push({ origin: url.origin, name, value: rest.join('='), path });
    }
  }

  header(url: URL): string {
    return this.cookies
      .filter((c) => c.origin === url.origin && url.pathname.startsWith(c.path))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }
}

export interface SsoRun {
  /** Where Palaver's callback sent the browser (the dashboard, with the code or the error in the fragment). */
  landing: URL;
  /** The fragment's parameters: `sso-code` or `sso-error`. */
  fragment: URLSearchParams;
}

/**
 * Signs in as a browser would, over HTTP: Palaver's start, the provider's login form (`login`
 * typed as the account) and consent, back to Palaver's callback. `beforeCallback` may change
 * the address the provider sends the browser back to (a tampered state).
 */
export async function signInThroughProvider(
  palaverUrl: string,
  login: string,
  options: { beforeCallback?: (url: URL) => URL; deny?: boolean } = {},
): Promise<SsoRun> {
  const jar = new CookieJar();
  let url = new URL('/adminApi/sso/start', palaverUrl);
  let method = 'GET';
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    if (url.pathname.endsWith('/adminApi/sso/callback') && options.beforeCallback) url = options.beforeCallback(url);
    const headers: Record<string, string> = { cookie: jar.header(url) };
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, { method, headers, body, redirect: 'manual' });
    jar.take(url, response);
    const location = response.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.pathname === '/dashboard') return { landing: next, fragment: new URLSearchParams(next.hash.slice(1)) };
      [url, method, body] = [next, 'GET', undefined];
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (response.status !== 200 || !action) throw new Error(`unexpected ${response.status} at ${url.href}: ${html.slice(0, 300)}`);
    body = new URLSearchParams();
    for (const [, name = '', value = ''] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) body.set(name, value);
    if (/name="login"/.test(html)) {
      body.set('login', login);
      body.set('password', 'any password');
    }
    // The consent page has a second form that aborts the interaction (access_denied).
    const abort = /<a href="([^"]+\/abort)"/.exec(html)?.[1];
    if (options.deny && abort && body.get('prompt') === 'consent') {
      [url, method, body] = [new URL(abort, url), 'GET', undefined];
      continue;
    }
    [url, method] = [new URL(action, url), 'POST'];
  }
  throw new Error('the sign-in did not come back to the dashboard');
}

/** A free loopback port, for a Palaver whose public URL must be known before it starts. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
