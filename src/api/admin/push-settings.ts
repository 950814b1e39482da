import { findAccount } from '../../tenancy/accounts.ts';
import { route, type AdminRoute } from './route.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { rule, SENDS_CONTENT } from './policy.ts';
import { respond } from '../../http/respond.ts';
import { notFound } from '../../errors.ts';
import { parseBody } from '../../http/validate.ts';
import { presentPushSettings } from '../../presenters/push-settings.ts';
import { deletePushSettings, findPushSettings, savePushSettings, type PushKind } from '../../push/settings.ts';
import type { AppContext } from '../../http/types.ts';
import { auditedChange } from './audit-context.ts';
import {
  accountIdParams,
  fcmSettingsBody,
  oauthWebhookSettingsBody,
  pushKindParams,
  webhookSettingsBody,
  pushSettingsBody,
} from './schema.ts';

export const pushSettingsRoutes: AdminRoute[] = [
  // The settings hold secrets, never returned; reading them says which are set.
  route({
    method: 'GET',
    path: '/accounts/:accountId/push-settings',
    rule: rule('account', 'accounts:read'),
    summary: 'Push settings per kind (fcm, webhook, oauthWebhook); secrets only said to be set',
    params: accountIdParams,
    handler: async (ctx, { params: { accountId } }) => {
      const em = ctx.deps.db.orm.em;
      if (!(await findAccount(em, accountId))) throw notFound('account_not_found');
      respond(ctx, { data: presentPushSettings(await findPushSettings(em, accountId)) });
    },
  }),
  // Replaces the kind's settings whole. A webhook's signing secret is made on its first save
  // and shown in that answer only; later saves keep it.
  // Pushes carry agent message texts to the webhook (or FCM project) set here.
  route({
    method: 'PUT',
    path: '/accounts/:accountId/push-settings/:kind',
    rule: rule('account', 'accounts:edit', SENDS_CONTENT),
    audit: 'push_settings.update',
    summary:
      "Set one kind's push settings (fcm: the service-account JSON; webhook; oauth-webhook); a new webhook signing secret is shown once",
    params: pushKindParams,
    bodyByPath: pushSettingsBody,
    handler: async (ctx, { params: { accountId, kind } }) => {
      const saved: Saved = await auditedChange(
        ctx,
        (tx) => save(ctx, tx, accountId, kind),
        (s) => s && { accountId, target: { kind }, changed: Object.keys(s.settings).filter((f) => f !== 'signingSecret' || s.newSecret) },
      );
      if (!saved) throw notFound('account_not_found');
      const shown = presentPushSettings({ [kind]: saved.settings });
      const data = kind === 'fcm' ? shown.fcm : kind === 'webhook' ? shown.webhook : shown.oauthWebhook;
      const secret = 'signingSecret' in saved.settings && saved.newSecret ? { signingSecret: saved.settings.signingSecret } : {};
      respond(ctx, { data: { kind, ...data, ...secret } });
    },
  }),
  // Stops pushes; sends nothing anywhere.
  route({
    method: 'DELETE',
    path: '/accounts/:accountId/push-settings/:kind',
    rule: rule('account', 'accounts:edit'),
    audit: 'push_settings.delete',
    summary: "Remove one kind's push settings",
    params: pushKindParams,
    handler: async (ctx, { params: { accountId, kind } }) => {
      const deleted = await auditedChange(
        ctx,
        (tx) => deletePushSettings(tx, accountId, kind),
        (done) => done && { accountId, target: { kind } },
      );
      if (!deleted) throw notFound('push_settings_not_found');
      respond(ctx, { data: { kind, deleted: true } });
    },
  }),
];

/** The body is checked by the kind's schema (422 naming the field) before anything is written. */
type Saved = Awaited<ReturnType<typeof savePushSettings<PushKind>>>;

function save(ctx: AppContext, em: EntityManager, accountId: number, kind: PushKind): Promise<Saved> {
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
