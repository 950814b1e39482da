import { route, type AdminRoute } from './route.ts';
import { rule, SENDS_CONTENT } from './policy.ts';
import { getService, refuseInbox, issueApiKey, listApiKeys, revokeApiKey, rotateSigningSecret } from '../../tenancy/services.ts';
import { respond } from '../../http/respond.ts';
import { notFound } from '../../errors.ts';
import { presentApiKey } from '../../presenters/api-key.ts';
import { keyParams, serviceIdParams } from './schema.ts';
import { auditedChange, auditRequest } from './audit-context.ts';
import { authorizedService } from './services.ts';

export const keyRoutes: AdminRoute[] = [
  // Lists keys without their secret.
  route({
    method: 'GET',
    path: '/services/:serviceId/keys',
    rule: rule('record', 'services:edit'),
    summary: 'API keys (without their secret)',
    params: serviceIdParams,
    record: authorizedService,
    handler: async (ctx, { record: service }) => {
      const keys = await listApiKeys(ctx.deps.db.orm.em, service.id);
      respond(ctx, { data: keys.map(presentApiKey) });
    },
  }),
  // A key reads every user and conversation of the account through the Service API.
  route({
    method: 'POST',
    path: '/services/:serviceId/keys',
    rule: rule('record', 'services:edit', SENDS_CONTENT),
    audit: 'service.create_key',
    summary: 'A new API key, shown once',
    params: serviceIdParams,
    status: 201,
    record: authorizedService,
    handler: async (ctx, { record: service }) => {
      // The inbox is the team in the dashboard: nothing calls the Service API as it.
      refuseInbox(service, 'inbox_has_no_api_keys');
      const { apiKey, key } = await auditedChange(
        ctx,
        async (tx) => {
          const issued = issueApiKey(tx, service.id);
          await tx.flush();
          return issued;
        },
        (issued) => ({ accountId: service.accountId, target: { serviceId: service.id, keyId: issued.key.id } }),
      );
      // The only time the key is shown.
      respond(ctx, { data: { ...presentApiKey(key), apiKey } }, 201);
    },
  }),
  route({
    method: 'DELETE',
    path: '/services/:serviceId/keys/:keyId',
    rule: rule('record', 'services:edit'),
    audit: 'service.revoke_key',
    summary: 'Revoke an API key',
    params: keyParams,
    record: authorizedService,
    handler: async (ctx, { record: service, params: { keyId } }) => {
      const key = await revokeApiKey(ctx.deps.db.orm.em, service.id, keyId, auditRequest(ctx));
      if (!key) throw notFound('key_not_found');
      respond(ctx, { data: presentApiKey(key) });
    },
  }),
  // Signs what is sent to the Service's own receiver; it reads nothing.
  route({
    method: 'POST',
    path: '/services/:serviceId/signing-secret',
    rule: rule('record', 'services:edit'),
    audit: 'service.rotate_signing_secret',
    summary: 'Rotate the signing secret (the old one signs too for a grace period)',
    params: serviceIdParams,
    record: authorizedService,
    handler: async (ctx, { record: service }) => {
      refuseInbox(service, 'inbox_has_no_webhook');
      const rotated = await auditedChange(
        ctx,
        async (tx) => rotateSigningSecret(tx, await getService(tx, service.id), ctx.deps.config.webhooks.secretGraceSeconds),
        () => ({ accountId: service.accountId, target: { serviceId: service.id }, changed: ['signingSecret'] }),
      );
      respond(ctx, {
        data: {
          signingSecret: rotated.signingSecret,
          previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() ?? null,
        },
      });
    },
  }),
];
