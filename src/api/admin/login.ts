import { route, type AdminRoute } from './route.ts';
import { login, normalizeEmail } from '../../tenancy/operators.ts';
import { forgetDemoLogin } from '../../setup/bootstrap.ts';
import { consumeEachOrRefuse } from '../../limits.ts';
import { respond } from '../../http/respond.ts';
import { forbidden, unauthorized } from '../../errors.ts';
import { loginBody } from './schema.ts';
import { presentLogin } from '../../presenters/operator.ts';
import { loginOptions } from './sign-in.ts';

export const loginRoutes: AdminRoute[] = [
  route({
    method: 'POST',
    path: '/login',
    rule: 'public',
    summary:
      'Operator login: a bearer token, or with two-factor sign-in a challenge for POST /adminApi/login/two-factor (403 password_sign_in_disabled when sso.passwordSignIn is false)',
    body: loginBody,
    // Single sign-on only (sso.passwordSignIn false): a password, right or wrong, opens nothing.
    guard: (ctx) => {
      if (!ctx.deps.config.sso.passwordSignIn) throw forbidden('password_sign_in_disabled');
    },
    handler: async (ctx, { body }) => {
      const email = normalizeEmail(body.email);
      // Failed sign-ins are counted three ways (docs/security.md): per email and address (a
      // guesser is stopped where it guesses, and only there), per address (any email: one place
      // guessing many operators) and per email from anywhere (a short window: a guesser using many
      // addresses is slowed, while the operator is kept out minutes at most). ctx.ip is the address
      // trusted proxies vouch for (addresses.ts), never a client's own X-Forwarded-For. A point is
      // taken before the password is checked, so concurrent guesses cannot pass a limit together.
      const pair = JSON.stringify([email, ctx.ip]);
      const taken = await consumeEachOrRefuse([
        [ctx.deps.loginLimiter, pair],
        [ctx.deps.loginAddressLimiter, ctx.ip],
        [ctx.deps.loginEmailLimiter, email],
      ]);
      const session = await login(ctx.deps.db.orm.em, body.email, body.password, loginOptions(ctx));
      if (!session) throw unauthorized('invalid_credentials');
      // The right password never counts, and starts the pair's count over.
      await taken.giveBack();
      await ctx.deps.loginLimiter.delete(pair);
      if (session === 'disabled') throw unauthorized('operator_disabled');
      // Its password is known now: the demo's banner is not shown again.
      if (ctx.deps.config.demo) forgetDemoLogin(ctx.deps.config.dataDir, email);
      respond(ctx, { data: presentLogin(session) });
    },
  }),
];
