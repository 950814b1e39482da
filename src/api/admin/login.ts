import { login, normalizeEmail } from '../../tenancy/operators.ts';
import { consumeOrRefuse } from '../../limits.ts';
import { respond } from '../../http/respond.ts';
import { unauthorized } from '../../errors.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseBody } from '../../http/validate.ts';
import { loginBody } from './schema.ts';
import { presentLogin } from '../../presenters/operator.ts';
import { loginOptions } from './sign-in.ts';

export function loginRoutes(router: AppRouter): void {
  router.post('/login', async (ctx) => {
    const body = parseBody(ctx, loginBody);
    // Per email (from anywhere) and per address (any email): guessing one operator's password
    // from many places, or many passwords from one place, is stopped alike. ctx.ip is the
    // address trusted proxies vouch for (addresses.ts), never a client's own X-Forwarded-For.
    await consumeOrRefuse(ctx.deps.loginAddressLimiter, ctx.ip);
    await consumeOrRefuse(ctx.deps.loginLimiter, normalizeEmail(body.email));
    const session = await login(ctx.deps.db.orm.em, body.email, body.password, loginOptions(ctx));
    if (!session) throw unauthorized('invalid_credentials');
    if (session === 'disabled') throw unauthorized('operator_disabled');
    respond(ctx, { data: presentLogin(session) });
  });
}
