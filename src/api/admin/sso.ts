// Single sign-on with the OpenID provider of `sso.oidc` (docs/security.md): the start sends
// the browser to the provider, the callback signs the operator in and sends the browser back
// to the dashboard with a one-time code in the fragment (never logged, never sent to a server),
// which the dashboard exchanges for a bearer token. Also GET /login: how operators may sign in
// here, for the sign-in page before anyone is signed in.
import { route, type AdminRoute } from './route.ts';
import type { OidcConfig } from '../../config.ts';
import { badRequest, notFound } from '../../errors.ts';
import { respond } from '../../http/respond.ts';
import type { AppContext } from '../../http/types.ts';
import { finishOidcSignIn, OidcFailure, redirectUri, startOidcSignIn, type OidcAttempt } from '../../security/oidc.ts';
import { seal, sealingKey, unseal, type SealingKey } from '../../security/sealed.ts';
import { exchangeSsoCode, recordSsoRefusal, ssoSignIn } from '../../tenancy/sso.ts';
import { ssoCallbackQuery, ssoExchangeBody } from './schema.ts';
import { loginOptions } from './sign-in.ts';
import { presentLogin } from '../../presenters/operator.ts';

const COOKIE = 'palaver_sso';
/** The time a person has at the provider (typing a password, a second factor) before the attempt lapses. */
const ATTEMPT_TTL_SECONDS = 600;

// Derived from the client secret, which every node already shares and which is secret: no
// new setting, and a rotated client secret only fails the attempts under way.
const keys = new WeakMap<OidcConfig, SealingKey>();
function keyOf(oidc: OidcConfig): SealingKey {
  let key = keys.get(oidc);
  if (!key) keys.set(oidc, (key = sealingKey(oidc.clientSecret, 'sso attempt cookie')));
  return key;
}

/** The provider, and the top-level `publicUrl` the configuration requires beside it. */
function oidcOf(ctx: AppContext): { oidc: OidcConfig; publicUrl: string } {
  const { sso, publicUrl } = ctx.deps.config;
  if (!sso.oidc || publicUrl === undefined) throw notFound('sso_not_configured');
  return { oidc: sso.oidc, publicUrl };
}

/** The guard of the single sign-on routes: 404 sso_not_configured, before anything sent is read. */
function requireSso(ctx: AppContext): void {
  oidcOf(ctx);
}

/** HttpOnly, only sent to /adminApi/sso/*, and Lax so that the provider's redirect back carries it. */
function attemptCookie(publicUrl: string, value: string, maxAge: number): string {
  const url = new URL(publicUrl);
  const path = `${url.pathname.replace(/\/+$/, '')}/adminApi/sso`;
  const secure = url.protocol === 'https:' ? '; Secure' : '';
  return `${COOKIE}=${value}; Path=${path}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

function isAttempt(value: unknown): value is OidcAttempt {
  if (typeof value !== 'object' || value === null) return false;
  const { state, nonce, verifier } = value as Record<string, unknown>;
  return typeof state === 'string' && typeof nonce === 'string' && typeof verifier === 'string';
}

/** Back to the sign-in page, which says why (web/dashboard/src/api.ts has the words). */
function backWithError(ctx: AppContext, publicUrl: string, code: string): void {
  ctx.redirect(`${publicUrl}/dashboard#sso-error=${code}`);
}

export const ssoRoutes: AdminRoute[] = [
  route({
    method: 'GET',
    path: '/login',
    rule: 'public',
    summary: 'How operators may sign in: {password, sso: {name, startUrl} | null}',
    handler: (ctx) => {
      const { oidc, passwordSignIn } = ctx.deps.config.sso;
      respond(ctx, { data: { password: passwordSignIn, sso: oidc ? { name: oidc.name, startUrl: '/adminApi/sso/start' } : null } });
    },
  }),
  route({
    method: 'GET',
    path: '/sso/start',
    rule: 'public',
    summary: 'Single sign-on: 302 to the OpenID provider (state, nonce and PKCE verifier in a sealed cookie)',
    status: 302,
    guard: requireSso,
    handler: async (ctx) => {
      const { oidc, publicUrl } = oidcOf(ctx);
      try {
        const { url, attempt } = await startOidcSignIn(oidc, publicUrl);
        ctx.set('set-cookie', attemptCookie(publicUrl, seal(keyOf(oidc), attempt, ATTEMPT_TTL_SECONDS), ATTEMPT_TTL_SECONDS));
        ctx.set('cache-control', 'no-store');
        ctx.redirect(url);
      } catch (err) {
        if (!(err instanceof OidcFailure)) throw err;
        ctx.state.log.warn({ err: err.cause }, 'single sign-on: the provider could not be reached');
        backWithError(ctx, publicUrl, err.code);
      }
    },
  }),
  route({
    method: 'GET',
    path: '/sso/callback',
    rule: 'public',
    summary: "The provider's redirect: 302 to /dashboard#sso-code=… (or #sso-error=<code>)",
    query: ssoCallbackQuery,
    status: 302,
    guard: requireSso,
    handler: async (ctx, { query }) => {
      const { oidc, publicUrl } = oidcOf(ctx);
      // One attempt, one callback: the cookie goes whatever happens next.
      const sealed = ctx.cookies.get(COOKIE, { signed: false });
      ctx.set('set-cookie', attemptCookie(publicUrl, '', 0));
      ctx.set('cache-control', 'no-store');
      const attempt = sealed ? unseal(keyOf(oidc), sealed) : null;
      // No cookie (another browser, or more than ten minutes), or one changed: nothing to check against.
      if (!isAttempt(attempt)) return backWithError(ctx, publicUrl, 'sso_attempt_expired');
      // A state the attempt did not send: a forged or replayed callback (the library would refuse it too).
      if (query.state !== attempt.state) return backWithError(ctx, publicUrl, 'sso_state_mismatch');
      let identity;
      try {
        identity = await finishOidcSignIn(oidc, attempt, new URL(`${redirectUri(publicUrl)}?${ctx.querystring}`));
      } catch (err) {
        if (!(err instanceof OidcFailure)) throw err;
        // A person declining at the provider is ordinary; anything else is worth a look.
        const reason = err.cause instanceof Error ? err.cause.message : String(err.cause);
        ctx.state.log[err.code === 'sso_refused' ? 'info' : 'warn']({ code: err.code, reason }, 'single sign-on refused');
        await recordSsoRefusal(ctx.deps.db.orm.em, loginOptions(ctx), null, err.code);
        return backWithError(ctx, publicUrl, err.code);
      }
      if (!identity.email || !identity.emailVerified) {
        await recordSsoRefusal(ctx.deps.db.orm.em, loginOptions(ctx), null, 'email_not_verified');
        return backWithError(ctx, publicUrl, 'email_not_verified');
      }
      const result = await ssoSignIn(ctx.deps.db.orm.em, identity.email, oidc.createOperators, ctx.deps.config.security.passwordHashCost);
      if (typeof result === 'string') {
        ctx.state.log.info({ code: result, subject: identity.subject }, 'single sign-on refused');
        await recordSsoRefusal(ctx.deps.db.orm.em, loginOptions(ctx), identity.email, result);
        return backWithError(ctx, publicUrl, result);
      }
      if (result.created) ctx.state.log.info({ subject: identity.subject }, 'single sign-on created an operator');
      ctx.redirect(`${publicUrl}/dashboard#sso-code=${result.code}`);
    },
  }),
  route({
    method: 'POST',
    path: '/sso/exchange',
    rule: 'public',
    summary: "A finished single sign-on's one-time code (valid a minute) for a bearer token",
    body: ssoExchangeBody,
    guard: requireSso,
    handler: async (ctx, { body }) => {
      const result = await exchangeSsoCode(ctx.deps.db.orm.em, body.code, loginOptions(ctx));
      if (!result) throw badRequest('sso_code_invalid');
      // Two-factor sign-in on: the provider vouched for the first factor only (docs/security.md).
      respond(ctx, { data: presentLogin(result) });
    },
  }),
];
