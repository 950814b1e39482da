import { refuseInbox, issueApiKey, listApiKeys, revokeApiKey, rotateSigningSecret } from '../../tenancy/services.ts';
import { respond } from '../../http/respond.ts';
import { notFound } from '../../errors.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import { presentApiKey } from '../../presenters/api-key.ts';
import { keyParams } from './schema.ts';
import { authorizedService } from './services.ts';

export function keyRoutes(router: AppRouter): void {
  router.get('/services/:serviceId/keys', async (ctx) => {
    const service = await authorizedService(ctx, 'GET /services/:serviceId/keys');
    const keys = await listApiKeys(ctx.deps.db.orm.em, service.id);
    respond(ctx, { data: keys.map(presentApiKey) });
  });

  router.post('/services/:serviceId/keys', async (ctx) => {
    const service = await authorizedService(ctx, 'POST /services/:serviceId/keys');
    // The inbox is the team in the dashboard: nothing calls the Service API as it.
    refuseInbox(service, 'inbox_has_no_api_keys');
    const em = ctx.deps.db.orm.em;
    const { apiKey, key } = issueApiKey(em, service.id);
    await em.flush();
    // The only time the key is shown.
    respond(ctx, { data: { ...presentApiKey(key), apiKey } }, 201);
  });

  router.delete('/services/:serviceId/keys/:keyId', async (ctx) => {
    const service = await authorizedService(ctx, 'DELETE /services/:serviceId/keys/:keyId');
    const { keyId } = parseParams(ctx, keyParams);
    const key = await revokeApiKey(ctx.deps.db.orm.em, service.id, keyId);
    if (!key) throw notFound('key_not_found');
    respond(ctx, { data: presentApiKey(key) });
  });

  router.post('/services/:serviceId/signing-secret', async (ctx) => {
    const service = await authorizedService(ctx, 'POST /services/:serviceId/signing-secret');
    refuseInbox(service, 'inbox_has_no_webhook');
    const rotated = await rotateSigningSecret(ctx.deps.db.orm.em, service, ctx.deps.config.webhooks.secretGraceSeconds);
    respond(ctx, {
      data: {
        signingSecret: rotated.signingSecret,
        previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() ?? null,
      },
    });
  });
}
