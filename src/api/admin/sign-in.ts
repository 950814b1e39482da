// The open steps of signing in besides the password (login.ts): the two-factor code, and setting
// a password with a reset link. Neither needs a session; both are rate-limited like the password.
import { route, type AdminRoute } from './route.ts';
import { consumeOrRefuse } from '../../limits.ts';
import { respond } from '../../http/respond.ts';
import { badRequest, unauthorized } from '../../errors.ts';
import type { AppContext } from '../../http/types.ts';
import type { LoginOptions } from '../../tenancy/operators.ts';
import { challengeOperator, completeTwoFactorLogin } from '../../tenancy/two-factor.ts';
import { resetPassword } from '../../tenancy/password-resets.ts';
import { presentLogin } from '../../presenters/operator.ts';
import { passwordResetBody, twoFactorLoginBody } from './schema.ts';

/** What a sign-in needs from the configuration and the request. */
export function loginOptions(ctx: AppContext): LoginOptions {
  const { admin, security } = ctx.deps.config;
  return {
    ttlSeconds: admin.sessionTtlSeconds,
    hashCost: security.passwordHashCost,
    challengeTtlSeconds: admin.twoFactorChallengeTtlSeconds,
    address: ctx.ip || null,
    userAgent: ctx.get('user-agent') || null,
    requestId: ctx.state.requestId,
  };
}

export const signInRoutes: AdminRoute[] = [
  route({
    method: 'POST',
    path: '/login/two-factor',
    rule: 'public',
    summary: 'Second step of a sign-in: the challenge and a TOTP or recovery code give a bearer token (401 invalid_code)',
    body: twoFactorLoginBody,
    handler: async (ctx, { body }) => {
      await consumeOrRefuse(ctx.deps.loginAddressLimiter, ctx.ip);
      const em = ctx.deps.db.orm.em;
      const operator = await challengeOperator(em, body.challenge);
      if (operator === null) throw unauthorized('invalid_challenge');
      // Per operator (by identifier, which no other database shares), however many challenges
      // their password opened: six digits are guessed no faster than a password.
      await consumeOrRefuse(ctx.deps.twoFactorLimiter, operator);
      const result = await completeTwoFactorLogin(em, {
        ...body,
        ttlSeconds: ctx.deps.config.admin.sessionTtlSeconds,
        origin: loginOptions(ctx),
      });
      if (result === null) throw unauthorized('invalid_challenge');
      if (result === 'invalid_code') throw unauthorized('invalid_code');
      respond(ctx, { data: presentLogin(result) });
    },
  }),
  route({
    method: 'POST',
    path: '/password-reset',
    rule: 'public',
    summary: "Set a password with a reset link's token (single use); every session of the operator ends (400 invalid_reset_token)",
    body: passwordResetBody,
    handler: async (ctx, { body }) => {
      await consumeOrRefuse(ctx.deps.loginAddressLimiter, ctx.ip);
      const done = await resetPassword(ctx.deps.db.orm.em, {
        token: body.token,
        password: body.password,
        hashCost: ctx.deps.config.security.passwordHashCost,
        origin: loginOptions(ctx),
      });
      if (!done) throw badRequest('invalid_reset_token');
      respond(ctx, { data: null });
    },
  }),
];
