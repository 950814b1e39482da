import { createAccount, findAccountOverview, listAccounts, rotateAuthorizationSecret, updateAccount } from '../../tenancy/accounts.ts';
import { createService } from '../../tenancy/services.ts';
import { changeDefaultService } from '../../tenancy/default-service.ts';
import { AccountSchema } from '../../db/entities/index.ts';
import { respond } from '../../http/respond.ts';
import { conflict, notFound } from '../../errors.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseBody, parseParams } from '../../http/validate.ts';
import { presentAccount, presentAccountOverview, presentAuthorizationSecret, presentCreatedAccount } from '../../presenters/account.ts';
import { presentCreatedService } from '../../presenters/service.ts';
import { authorize, authorizeListing } from './auth.ts';
import { accountIdParams, createAccountBody, createServiceBody, defaultServiceBody, updateAccountBody } from './schema.ts';

export function accountRoutes(router: AppRouter): void {
  router.get('/accounts', async (ctx) => {
    const readable = authorizeListing(ctx, 'GET /accounts');
    const accounts = await listAccounts(ctx.deps.db.orm.em, readable);
    respond(ctx, { data: accounts.map(presentAccount) });
  });

  router.post('/accounts', async (ctx) => {
    authorize(ctx, 'POST /accounts');
    const body = parseBody(ctx, createAccountBody);
    const account = await createAccount(ctx.deps.db.orm.em, body);
    respond(ctx, { data: presentCreatedAccount(account) }, 201);
  });

  router.get('/accounts/:accountId', async (ctx) => {
    const { accountId } = parseParams(ctx, accountIdParams);
    authorize(ctx, 'GET /accounts/:accountId', accountId);
    const overview = await findAccountOverview(ctx.deps.db.orm.em, accountId);
    if (!overview) throw notFound('account_not_found');
    respond(ctx, { data: presentAccountOverview(overview.account, overview.services, overview.inbox) });
  });

  router.patch('/accounts/:accountId', async (ctx) => {
    const { accountId } = parseParams(ctx, accountIdParams);
    authorize(ctx, 'PATCH /accounts/:accountId', accountId);
    const body = parseBody(ctx, updateAccountBody);
    // Requiring a second factor without one would withhold the operator's own grants at once.
    if (body.requireTwoFactor && !ctx.state.operator?.twoFactorEnabled) throw conflict('two_factor_not_enabled');
    const account = await updateAccount(ctx.deps.db.orm.em, accountId, body);
    if (!account) throw notFound('account_not_found');
    respond(ctx, { data: presentAccount(account) });
  });

  router.post('/accounts/:accountId/authorization-secret', async (ctx) => {
    const { accountId } = parseParams(ctx, accountIdParams);
    authorize(ctx, 'POST /accounts/:accountId/authorization-secret', accountId);
    const em = ctx.deps.db.orm.em.fork();
    const account = await em.findOne(AccountSchema, { id: accountId });
    if (!account) throw notFound('account_not_found');
    const rotated = await rotateAuthorizationSecret(em, account, ctx.deps.config.client.authorizationSecretGraceSeconds);
    respond(ctx, { data: presentAuthorizationSecret(rotated) });
  });

  router.put('/accounts/:accountId/default-service', async (ctx) => {
    const { accountId } = parseParams(ctx, accountIdParams);
    authorize(ctx, 'PUT /accounts/:accountId/default-service', accountId);
    const body = parseBody(ctx, defaultServiceBody);
    const operator = ctx.state.operator;
    if (!operator) throw new Error('requireOperator() must run before admin routes');
    const { changed } = await changeDefaultService(ctx.deps.db.orm.em, {
      accountId,
      serviceIdentification: body.serviceIdentification,
      operatorIdentifier: operator.identifier,
    });
    const overview = await findAccountOverview(ctx.deps.db.orm.em, accountId);
    if (!overview) throw notFound('account_not_found');
    respond(ctx, { data: { ...presentAccountOverview(overview.account, overview.services, overview.inbox), changed } });
  });

  router.post('/accounts/:accountId/services', async (ctx) => {
    const { accountId } = parseParams(ctx, accountIdParams);
    authorize(ctx, 'POST /accounts/:accountId/services', accountId);
    const body = parseBody(ctx, createServiceBody);
    const created = await createService(ctx.deps.db.orm.em, accountId, body);
    if (!created) throw notFound('account_not_found');
    const defaultServiceId = created.isDefault ? created.service.id : null;
    respond(ctx, { data: presentCreatedService(created.service, defaultServiceId, created.apiKey) }, 201);
  });
}
