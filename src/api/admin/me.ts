// The signed-in operator's own account: password, two-factor sign-in, sessions. A session is all
// these routes need; each acts on its own operator only.
import type { EntityManager } from '@mikro-orm/postgresql';
import { route, type AdminRoute } from './route.ts';
import { rule } from './policy.ts';
import { consumeEachOrRefuse, consumeOrRefuse } from '../../limits.ts';
import { respond } from '../../http/respond.ts';
import { conflict, forbidden } from '../../errors.ts';
import type { AppContext } from '../../http/types.ts';
import { changePassword, listSessions } from '../../tenancy/operators.ts';
import { confirmEnrolment, disableTwoFactor, renewRecoveryCodes, startEnrolment } from '../../tenancy/two-factor.ts';
import { presentOperatorSession } from '../../presenters/operator.ts';
import { signedIn } from './operator-access.ts';
import { auditedChange, auditRequest } from './audit-context.ts';
import { endOneSession } from './operators.ts';
import { changePasswordBody, sessionIdParams, twoFactorCodeBody } from './schema.ts';

/** Codes typed while signed in count against the same per-operator limit as at sign-in. */
async function limitCodes(ctx: AppContext): Promise<void> {
  await consumeOrRefuse(ctx.deps.twoFactorLimiter, signedIn(ctx).identifier);
}

type Refusal = 'not_enabled' | 'invalid_code';

/**
 * A change to an enabled second factor, confirmed by the code of the body: the code limited,
 * the change audited (with the fields `changed` names for its result), its refusals thrown.
 */
async function withEnabledTwoFactor<R>(
  ctx: AppContext,
  code: string,
  change: (tx: EntityManager, input: { operatorId: number; code: string }) => Promise<R>,
  changed: (result: R) => string[] | null,
): Promise<Exclude<R, Refusal>> {
  await limitCodes(ctx);
  const operatorId = signedIn(ctx).id;
  const result = await auditedChange(
    ctx,
    (tx) => change(tx, { operatorId, code }),
    (r) => {
      const fields = changed(r);
      return fields ? { target: { operatorId }, changed: fields } : null;
    },
  );
  if (result === 'not_enabled') throw conflict('two_factor_not_enabled');
  if (result === 'invalid_code') throw forbidden('invalid_code');
  return result as Exclude<R, Refusal>;
}

export const meRoutes: AdminRoute[] = [
  // The operator's own account: only their own password, second factor and sessions.
  route({
    method: 'PUT',
    path: '/me/password',
    rule: rule('session'),
    audit: 'operator.password_change',
    summary: "Change one's password (the current one required, 403 wrong_password); every other session ends",
    body: changePasswordBody,
    handler: async (ctx, { body }) => {
      const operator = signedIn(ctx);
      // The current password is guessed no faster here than at the login (the same email and
      // address count); the right one gives its point back.
      const taken = await consumeEachOrRefuse([[ctx.deps.loginLimiter, JSON.stringify([operator.email, ctx.ip])]]);
      const result = await changePassword(
        ctx.deps.db.orm.em,
        {
          operatorId: operator.id,
          sessionId: operator.sessionId,
          currentPassword: body.currentPassword,
          newPassword: body.newPassword,
          hashCost: ctx.deps.config.security.passwordHashCost,
        },
        auditRequest(ctx),
      );
      if (result === 'wrong_password') throw forbidden('wrong_password');
      await taken.giveBack();
      respond(ctx, { data: null });
    },
  }),
  route({
    method: 'GET',
    path: '/me/sessions',
    rule: rule('session'),
    summary: "One's sessions that have not expired, newest first",
    handler: async (ctx) => {
      const operator = signedIn(ctx);
      const sessions = await listSessions(ctx.deps.db.orm.em, operator.id);
      respond(ctx, { data: sessions.map((s) => presentOperatorSession(s, operator.sessionId)) });
    },
  }),
  route({
    method: 'DELETE',
    path: '/me/sessions/:sessionId',
    rule: rule('session'),
    audit: 'session.end',
    summary: "End one of one's sessions",
    params: sessionIdParams,
    handler: async (ctx, { params: { sessionId } }) => {
      await endOneSession(ctx, signedIn(ctx).id, sessionId);
      respond(ctx, { data: null });
    },
  }),
  route({
    method: 'POST',
    path: '/me/two-factor',
    rule: rule('session'),
    audit: 'two_factor.start',
    summary: 'Start enrolling an authenticator: a TOTP secret and its otpauth:// URL (for the QR code)',
    status: 201,
    handler: async (ctx) => {
      const operatorId = signedIn(ctx).id;
      const enrolment = await auditedChange(
        ctx,
        (tx) => startEnrolment(tx, operatorId),
        (e) => (e === 'already_enabled' ? null : { target: { operatorId }, changed: ['pendingSecret'] }),
      );
      if (enrolment === 'already_enabled') throw conflict('two_factor_already_enabled');
      respond(ctx, { data: enrolment }, 201);
    },
  }),
  route({
    method: 'POST',
    path: '/me/two-factor/confirm',
    rule: rule('session'),
    audit: 'two_factor.confirm',
    summary: 'Turn two-factor sign-in on with a code from the authenticator: ten recovery codes, shown once; other sessions end',
    body: twoFactorCodeBody,
    handler: async (ctx, { body }) => {
      await limitCodes(ctx);
      const operator = signedIn(ctx);
      const result = await auditedChange(
        ctx,
        (tx) => confirmEnrolment(tx, { operatorId: operator.id, sessionId: operator.sessionId, code: body.code }),
        (r) => (typeof r === 'string' ? null : { target: { operatorId: operator.id }, changed: ['twoFactor', 'recoveryCodes'] }),
      );
      if (result === 'already_enabled') throw conflict('two_factor_already_enabled');
      if (result === 'not_enrolling') throw conflict('two_factor_not_enrolling');
      if (result === 'invalid_code') throw forbidden('invalid_code');
      respond(ctx, { data: result });
    },
  }),
  route({
    method: 'POST',
    path: '/me/two-factor/recovery-codes',
    rule: rule('session'),
    audit: 'two_factor.renew_recovery_codes',
    summary: 'Ten new recovery codes for a code (the old ones stop working)',
    body: twoFactorCodeBody,
    handler: async (ctx, { body }) => {
      const codes = await withEnabledTwoFactor(ctx, body.code, renewRecoveryCodes, (r) =>
        typeof r === 'string' ? null : ['recoveryCodes'],
      );
      respond(ctx, { data: codes });
    },
  }),
  route({
    method: 'POST',
    path: '/me/two-factor/disable',
    rule: rule('session'),
    audit: 'two_factor.disable',
    summary: 'Turn two-factor sign-in off with a TOTP or recovery code',
    body: twoFactorCodeBody,
    handler: async (ctx, { body }) => {
      await withEnabledTwoFactor(ctx, body.code, disableTwoFactor, (r) => (r === 'disabled' ? ['twoFactor'] : null));
      respond(ctx, { data: null });
    },
  }),
];
