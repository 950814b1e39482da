import { route, type AdminRoute } from './route.ts';
import { rule, SENDS_CONTENT } from './policy.ts';
import { createAccount, findAccountOverview, listAccounts, rotateAuthorizationSecret, updateAccount } from '../../tenancy/accounts.ts';
import { createService } from '../../tenancy/services.ts';
import { changeDefaultService } from '../../tenancy/default-service.ts';
import { respond } from '../../http/respond.ts';
import type { AppContext } from '../../http/types.ts';
import { conflict, notFound } from '../../errors.ts';
import { presentAccount, presentAccountOverview, presentAuthorizationSecret, presentCreatedAccount } from '../../presenters/account.ts';
import { presentCreatedService } from '../../presenters/service.ts';
import { sentFields } from '../../audit/entries.ts';
import { auditedChange, auditRequest } from './audit-context.ts';
import { authorizeListing, signedIn } from './operator-access.ts';
import { accountIdParams, createAccountBody, createServiceBody, defaultServiceBody, updateAccountBody } from './schema.ts';

export const accountRoutes: AdminRoute[] = [
  route({
    method: 'GET',
    path: '/accounts',
    rule: rule('listing', 'accounts:read'),
    summary: 'Accounts the operator may read, by name',
    handler: async (ctx) => {
      const accounts = await listAccounts(ctx.deps.db.orm.em, authorizeListing(ctx));
      respond(ctx, { data: accounts.map(presentAccount) });
    },
  }),
  route({
    method: 'POST',
    path: '/accounts',
    rule: rule('everywhere', 'accounts:create'),
    audit: 'account.create',
    summary: 'Create an account',
    body: createAccountBody,
    status: 201,
    handler: async (ctx, { body }) => {
      const account = await auditedChange(
        ctx,
        (tx) => createAccount(tx, body),
        (a) => ({ accountId: a.id, target: { accountId: a.id }, changed: sentFields(body) }),
      );
      respond(ctx, { data: presentCreatedAccount(account) }, 201);
    },
  }),
  route({
    method: 'GET',
    path: '/accounts/:accountId',
    rule: rule('account', 'accounts:read'),
    summary: 'An account with its Services',
    params: accountIdParams,
    handler: async (ctx, { params: { accountId } }) => {
      respond(ctx, { data: await overviewOf(ctx, accountId) });
    },
  }),
  route({
    method: 'PATCH',
    path: '/accounts/:accountId',
    rule: rule('account', 'accounts:edit'),
    audit: 'account.update',
    summary: 'Name, welcome and sticky messages, allowed widget origins',
    params: accountIdParams,
    body: updateAccountBody,
    handler: async (ctx, { params: { accountId }, body }) => {
      // Requiring a second factor without one would withhold the operator's own grants at once.
      if (body.requireTwoFactor && !signedIn(ctx).twoFactorEnabled) throw conflict('two_factor_not_enabled');
      const account = await updateAccount(ctx.deps.db.orm.em, accountId, body, { ...auditRequest(ctx), changed: sentFields(body) });
      if (!account) throw notFound('account_not_found');
      respond(ctx, { data: presentAccount(account) });
    },
  }),
  // The new secret is shown in the answer, and whoever holds it can sign in as any customer.
  route({
    method: 'POST',
    path: '/accounts/:accountId/authorization-secret',
    rule: rule('account', 'accounts:edit', SENDS_CONTENT),
    audit: 'account.rotate_authorization_secret',
    summary: "Rotate the account's authorization secret: the new one is shown once; the old one verifies headers for a grace period",
    params: accountIdParams,
    handler: async (ctx, { params: { accountId } }) => {
      const rotated = await rotateAuthorizationSecret(
        ctx.deps.db.orm.em,
        accountId,
        ctx.deps.config.client.authorizationSecretGraceSeconds,
        auditRequest(ctx),
      );
      if (!rotated) throw notFound('account_not_found');
      respond(ctx, { data: presentAuthorizationSecret(rotated) });
    },
  }),
  // New conversations go to the default Service's webhook.
  route({
    method: 'PUT',
    path: '/accounts/:accountId/default-service',
    rule: rule('account', 'services:edit', SENDS_CONTENT),
    audit: 'account.set_default_service',
    summary: 'Change the default Service (changeDefaultService action)',
    params: accountIdParams,
    body: defaultServiceBody,
    handler: async (ctx, { params: { accountId }, body }) => {
      const { changed } = await changeDefaultService(
        ctx.deps.db.orm.em,
        { accountId, serviceIdentification: body.serviceIdentification, operatorIdentifier: signedIn(ctx).identifier },
        auditRequest(ctx),
      );
      respond(ctx, { data: { ...(await overviewOf(ctx, accountId)), changed } });
    },
  }),
  // The answer holds the new Service's first API key (and it may name a webhook URL).
  route({
    method: 'POST',
    path: '/accounts/:accountId/services',
    rule: rule('account', 'services:edit', SENDS_CONTENT),
    audit: 'service.create',
    summary: 'Attach a Service; answers its API key once',
    params: accountIdParams,
    body: createServiceBody,
    status: 201,
    handler: async (ctx, { params: { accountId }, body }) => {
      const created = await createService(ctx.deps.db.orm.em, accountId, body, { ...auditRequest(ctx), changed: sentFields(body) });
      if (!created) throw notFound('account_not_found');
      const defaultServiceId = created.isDefault ? created.service.id : null;
      respond(ctx, { data: presentCreatedService(created.service, defaultServiceId, created.apiKey) }, 201);
    },
  }),
];

/** The account with its Services, as GET /accounts/:accountId shows it (404 account_not_found). */
async function overviewOf(ctx: AppContext, accountId: number) {
  const overview = await findAccountOverview(ctx.deps.db.orm.em, accountId);
  if (!overview) throw notFound('account_not_found');
  return presentAccountOverview(overview.account, overview.services, overview.inbox);
}
