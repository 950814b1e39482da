// The signed-in operator's own account: password, two-factor sign-in, sessions. A session is all
// these routes need; each acts on its own operator only.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AdminRoute } from './route.ts';
import { rule } from './policy.ts';
import { consumeEachOrRefuse, consumeOrRefuse } from '../../limits.ts';
import { respond } from '../../http/respond.ts';
import { conflict, forbidden, notFound } from '../../errors.ts';
import type { AppContext } from '../../http/types.ts';
import { parseBody, parseParams } from '../../http/validate.ts';
import { changePassword, endSessionOf, listSessions } from '../../tenancy/operators.ts';
import { confirmEnrolment, disableTwoFactor, renewRecoveryCodes, startEnrolment } from '../../tenancy/two-factor.ts';
import { presentOperatorSession } from '../../presenters/operator.ts';
import { authorize } from './operator-access.ts';
import { audited } from '../../audit/entries.ts';
import { auditRequest } from './audit-context.ts';
import { changePasswordBody, sessionIdParams, twoFactorCodeBody } from './schema.ts';

function operatorOf(ctx: AppContext) {
  const operator = ctx.state.operator;
  if (!operator) throw new Error('requireOperator() must run before admin routes');
  return operator;
}

/** Codes typed while signed in count against the same per-operator limit as at sign-in. */
async function limitCodes(ctx: AppContext): Promise<void> {
  await consumeOrRefuse(ctx.deps.twoFactorLimiter, operatorOf(ctx).identifier);
}

type Refusal = 'not_enabled' | 'invalid_code';

/**
 * A change to an enabled second factor, confirmed by a code from the body: the code limited,
 * the change audited (with the fields `changed` names for its result), its refusals thrown.
 */
async function withEnabledTwoFactor<R>(
  ctx: AppContext,
  change: (tx: EntityManager, input: { operatorId: number; code: string }) => Promise<R>,
  changed: (result: R) => string[] | null,
): Promise<Exclude<R, Refusal>> {
  authorize(ctx);
  const body = parseBody(ctx, twoFactorCodeBody);
  await limitCodes(ctx);
  const operatorId = operatorOf(ctx).id;
  const result = await audited(
    ctx.deps.db.orm.em,
    auditRequest(ctx),
    (tx) => change(tx, { operatorId, code: body.code }),
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
  {
    method: 'PUT',
    path: '/me/password',
    rule: rule('session'),
    audit: 'operator.password_change',
    summary: "Change one's password (the current one required, 403 wrong_password); every other session ends",
    body: changePasswordBody,
    handler: async (ctx) => {
      authorize(ctx);
      const operator = operatorOf(ctx);
      const body = parseBody(ctx, changePasswordBody);
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
  },
  {
    method: 'GET',
    path: '/me/sessions',
    rule: rule('session'),
    summary: "One's sessions that have not expired, newest first",
    handler: async (ctx) => {
      authorize(ctx);
      const operator = operatorOf(ctx);
      const sessions = await listSessions(ctx.deps.db.orm.em, operator.id);
      respond(ctx, { data: sessions.map((s) => presentOperatorSession(s, operator.sessionId)) });
    },
  },
  {
    method: 'DELETE',
    path: '/me/sessions/:sessionId',
    rule: rule('session'),
    audit: 'session.end',
    summary: "End one of one's sessions",
    params: sessionIdParams,
    handler: async (ctx) => {
      authorize(ctx);
      const { sessionId } = parseParams(ctx, sessionIdParams);
      if (
        !(await audited(
          ctx.deps.db.orm.em,
          auditRequest(ctx),
          (tx) => endSessionOf(tx, operatorOf(ctx).id, sessionId),
          (ended) => ended && { target: { operatorId: operatorOf(ctx).id, sessionId } },
        ))
      )
        throw notFound('session_not_found');
      respond(ctx, { data: null });
    },
  },
  {
    method: 'POST',
    path: '/me/two-factor',
    rule: rule('session'),
    audit: 'two_factor.start',
    summary: 'Start enrolling an authenticator: a TOTP secret and its otpauth:// URL (for the QR code)',
    status: 201,
    handler: async (ctx) => {
      authorize(ctx);
      const enrolment = await audited(
        ctx.deps.db.orm.em,
        auditRequest(ctx),
        (tx) => startEnrolment(tx, operatorOf(ctx).id),
        (e) => (e === 'already_enabled' ? null : { target: { operatorId: operatorOf(ctx).id }, changed: ['pendingSecret'] }),
      );
      if (enrolment === 'already_enabled') throw conflict('two_factor_already_enabled');
      respond(ctx, { data: enrolment }, 201);
    },
  },
  {
    method: 'POST',
    path: '/me/two-factor/confirm',
    rule: rule('session'),
    audit: 'two_factor.confirm',
    summary: 'Turn two-factor sign-in on with a code from the authenticator: ten recovery codes, shown once; other sessions end',
    body: twoFactorCodeBody,
    handler: async (ctx) => {
      authorize(ctx);
      const body = parseBody(ctx, twoFactorCodeBody);
      await limitCodes(ctx);
      const operator = operatorOf(ctx);
      const result = await audited(
        ctx.deps.db.orm.em,
        auditRequest(ctx),
        (tx) =>
          confirmEnrolment(tx, {
            operatorId: operator.id,
            sessionId: operator.sessionId,
            code: body.code,
          }),
        (r) => (typeof r === 'string' ? null : { target: { operatorId: operator.id }, changed: ['twoFactor', 'recoveryCodes'] }),
      );
      if (result === 'already_enabled') throw conflict('two_factor_already_enabled');
      if (result === 'not_enrolling') throw conflict('two_factor_not_enrolling');
      if (result === 'invalid_code') throw forbidden('invalid_code');
      respond(ctx, { data: result });
    },
  },
  {
    method: 'POST',
    path: '/me/two-factor/recovery-codes',
    rule: rule('session'),
    audit: 'two_factor.renew_recovery_codes',
    summary: 'Ten new recovery codes for a code (the old ones stop working)',
    body: twoFactorCodeBody,
    handler: async (ctx) => {
      const codes = await withEnabledTwoFactor(ctx, renewRecoveryCodes, (r) => (typeof r === 'string' ? null : ['recoveryCodes']));
      respond(ctx, { data: codes });
    },
  },
  {
    method: 'POST',
    path: '/me/two-factor/disable',
    rule: rule('session'),
    audit: 'two_factor.disable',
    summary: 'Turn two-factor sign-in off with a TOTP or recovery code',
    body: twoFactorCodeBody,
    handler: async (ctx) => {
      await withEnabledTwoFactor(ctx, disableTwoFactor, (r) => (r === 'disabled' ? ['twoFactor'] : null));
      respond(ctx, { data: null });
    },
  },
];
