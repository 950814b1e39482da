import { respond } from '../../http/respond.ts';
import { notFound } from '../../errors.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseBody, parseParams } from '../../http/validate.ts';
import { presentPushSettings } from '../../presenters/push-settings.ts';
import { deletePushSettings, findPushSettings, savePushSettings, type PushKind } from '../../push/settings.ts';
import { AccountSchema } from '../../db/entities/index.ts';
import type { AppContext } from '../../http/types.ts';
import { authorize } from './auth.ts';
import { accountIdParams, fcmSettingsBody, oauthWebhookSettingsBody, pushKindParams, webhookSettingsBody } from './schema.ts';

export function pushSettingsRoutes(router: AppRouter): void {
  router.get('/accounts/:accountId/push-settings', async (ctx) => {
    const { accountId } = parseParams(ctx, accountIdParams);
    authorize(ctx, 'GET /accounts/:accountId/push-settings', accountId);
    const em = ctx.deps.db.orm.em;
    if (!(await em.findOne(AccountSchema, { id: accountId }))) throw notFound('account_not_found');
    respond(ctx, { data: presentPushSettings(await findPushSettings(em, accountId)) });
  });

  // Replaces the kind's settings whole. A webhook's signing secret is made on its first save
  // and shown in that answer only; later saves keep it.
  router.put('/accounts/:accountId/push-settings/:kind', async (ctx) => {
    const { accountId, kind } = parseParams(ctx, pushKindParams);
    authorize(ctx, 'PUT /accounts/:accountId/push-settings/:kind', accountId);
    const saved = await save(ctx, accountId, kind);
    if (!saved) throw notFound('account_not_found');
    const shown = presentPushSettings({ [kind]: saved.settings });
    const data = kind === 'fcm' ? shown.fcm : kind === 'webhook' ? shown.webhook : shown.oauthWebhook;
    const secret = 'signingSecret' in saved.settings && saved.newSecret ? { signingSecret: saved.settings.signingSecret } : {};
    respond(ctx, { data: { kind, ...data, ...secret } });
  });

  router.delete('/accounts/:accountId/push-settings/:kind', async (ctx) => {
    const { accountId, kind } = parseParams(ctx, pushKindParams);
    authorize(ctx, 'DELETE /accounts/:accountId/push-settings/:kind', accountId);
    if (!(await deletePushSettings(ctx.deps.db.orm.em, accountId, kind))) throw notFound('push_settings_not_found');
    respond(ctx, { data: { kind, deleted: true } });
  });
}

/** The body is checked by the kind's schema (422 naming the field) before anything is written. */
function save(ctx: AppContext, accountId: number, kind: PushKind) {
  const em = ctx.deps.db.orm.em;
  switch (kind) {
    case 'fcm': {
      const { serviceAccount } = parseBody(ctx, fcmSettingsBody);
      return savePushSettings(em, accountId, 'fcm', {
        projectId: serviceAccount.project_id,
        clientEmail: serviceAccount.client_email,
        privateKey: serviceAccount.private_key,
      });
    }
    case 'webhook':
      return savePushSettings(em, accountId, 'webhook', parseBody(ctx, webhookSettingsBody));
    case 'oauth-webhook': {
      const body = parseBody(ctx, oauthWebhookSettingsBody);
      return savePushSettings(em, accountId, 'oauth-webhook', { ...body, scope: body.scope ?? null });
    }
  }
}
