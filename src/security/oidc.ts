// The OpenID Connect relying party (openid-client): discovery from the issuer, the
// authorization code flow with PKCE, and what the provider says about the person. The
// library checks state, nonce, issuer, audience, the ID token's signature and the PKCE binding;
// this file only decides what a sign-in needs from the claims.
import * as client from 'openid-client';
import type { OidcConfig } from '../config.ts';

/** What one sign-in attempt must carry from the start to the callback (kept in a sealed cookie). */
export interface OidcAttempt {
  state: string;
  nonce: string;
  verifier: string;
}

export interface OidcIdentity {
  subject: string;
  email: string | null;
  /** Only a boolean true counts: a missing claim or the string "true" does not. */
  emailVerified: boolean;
}

/** Why a sign-in at the provider did not give an identity; `refused`: the provider said no. */
export class OidcFailure extends Error {
  constructor(
    readonly code: 'sso_refused' | 'sso_failed' | 'sso_unavailable',
    cause: unknown,
  ) {
    super(code, { cause });
    this.name = 'OidcFailure';
  }
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Plain HTTP only to a provider on this machine (tests, development); anything else needs TLS. */
export function insecureAllowed(issuer: string): boolean {
  const url = new URL(issuer);
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname);
}

/** `publicUrl`: the top-level setting (required with sso.oidc), Palaver's address as browsers reach it. */
export function redirectUri(publicUrl: string): string {
  return `${publicUrl}/adminApi/sso/callback`;
}

// Discovered once per configuration and kept; a failed discovery is forgotten, so the next
// sign-in tries again (a provider that was down at the first attempt).
const discovered = new WeakMap<OidcConfig, Promise<client.Configuration>>();

function configuration(oidc: OidcConfig): Promise<client.Configuration> {
  const known = discovered.get(oidc);
  if (known) return known;
  const options = insecureAllowed(oidc.issuer) ? { execute: [client.allowInsecureRequests] } : undefined;
  const found = client.discovery(new URL(oidc.issuer), oidc.clientId, oidc.clientSecret, undefined, options);
  found.catch(() => discovered.delete(oidc));
  discovered.set(oidc, found);
  return found;
}

export async function startOidcSignIn(oidc: OidcConfig, publicUrl: string): Promise<{ url: string; attempt: OidcAttempt }> {
  let config: client.Configuration;
  try {
    config = await configuration(oidc);
  } catch (err) {
    throw new OidcFailure('sso_unavailable', err);
  }
  const attempt = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier() };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri(publicUrl),
    scope: oidc.scopes.join(' '),
    code_challenge: await client.calculatePKCECodeChallenge(attempt.verifier),
    code_challenge_method: 'S256',
    state: attempt.state,
    nonce: attempt.nonce,
  });
  return { url: url.href, attempt };
}

/** `callback`: the callback's public URL with the query the provider sent. */
export async function finishOidcSignIn(oidc: OidcConfig, attempt: OidcAttempt, callback: URL): Promise<OidcIdentity> {
  try {
    const config = await configuration(oidc);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: attempt.verifier,
      expectedState: attempt.state,
      expectedNonce: attempt.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new Error('no ID token');
    let email = claims.email;
    let verified = claims.email_verified;
    // Many providers put the email only in the UserInfo answer (the ID token carries `sub`).
    if (typeof email !== 'string' || verified === undefined) {
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      email = info.email;
      verified = info.email_verified;
    }
    return { subject: claims.sub, email: typeof email === 'string' ? email : null, emailVerified: verified === true };
  } catch (err) {
    throw new OidcFailure(err instanceof client.AuthorizationResponseError ? 'sso_refused' : 'sso_failed', err);
  }
}
