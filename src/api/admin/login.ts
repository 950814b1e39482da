import { login, normalizeEmail } from '../../tenancy/operators.ts';
import { consumeOrRefuse } from '../../limits.ts';
import { respond } from '../../http/respond.ts';
import { forbidden, unauthorized } from '../../errors.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseBody } from '../../http/validate.ts';
import { loginBody } from './schema.ts';

export function loginRoutes(router: AppRouter): void {
  router.post('/login', async (ctx) => {
    // Single sign-on only (sso.passwordSignIn false): a password, right or wrong, opens nothing.
    if (!ctx.deps.config.sso.passwordSignIn) throw forbidden('password_sign_in_disabled');
    const body = parseBody(ctx, loginBody);
    // Per email (from anywhere) and per address (any email): guessing one operator's password
    // from many places, or many passwords from one place, is stopped alike. ctx.ip is the
    // address trusted proxies vouch for (addresses.ts), never a client's own X-Forwarded-For.
    await consumeOrRefuse(ctx.deps.loginAddressLimiter, ctx.ip);
    await consumeOrRefuse(ctx.deps.loginLimiter, normalizeEmail(body.email));
    const session = await login(ctx.deps.db.orm.em, body.email, body.password, ctx.deps.config.admin.sessionTtlSeconds);
    if (!session) throw unauthorized('invalid_credentials');
    if (session === 'disabled') throw unauthorized('operator_disabled');
    respond(ctx, { data: { token: session.token, expiresAt: session.expiresAt.toISOString() } });
  });
}
