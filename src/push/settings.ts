// An account's push settings, one row per push type (the device's `pushType`). Secrets are
// stored with the rest and never leave through a read: presenters/push-settings.ts says which
// fields are set instead.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';

/** The Parley libraries' push types (PushType.java, Device.swift). */
export const PushType = { webhook: 4, oauthWebhook: 5, fcm: 6 } as const;
export type PushType = (typeof PushType)[keyof typeof PushType];

/** As the Admin API path names them. */
export const PUSH_KINDS = { fcm: PushType.fcm, webhook: PushType.webhook, 'oauth-webhook': PushType.oauthWebhook } as const;
export type PushKind = keyof typeof PUSH_KINDS;

export function pushKindOf(type: number): PushKind | null {
  const found = Object.entries(PUSH_KINDS).find(([, t]) => t === type);
  return found ? (found[0] as PushKind) : null;
}

/** From the Google service-account JSON (project_id, client_email, private_key). */
export interface FcmSettings {
  projectId: string;
  clientEmail: string;
  privateKey: string;
}

export interface WebhookSettings {
  url: string;
  /** Standard Webhooks secret, made here; shown once, when the webhook is first set. */
  signingSecret: string;
}

export interface OAuthWebhookSettings extends WebhookSettings {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string | null;
}

export interface PushSettingsByKind {
  fcm: FcmSettings;
  webhook: WebhookSettings;
  'oauth-webhook': OAuthWebhookSettings;
}

export type AnyPushSettings = FcmSettings | WebhookSettings | OAuthWebhookSettings;

export type PushSettingsInput<K extends PushKind> = Omit<PushSettingsByKind[K], 'signingSecret'>;

/** Every push setting of the account, by kind; kinds without settings are absent. */
export async function findPushSettings(em: EntityManager, accountId: number): Promise<Partial<PushSettingsByKind>> {
  const rows = await em
    .getConnection()
    .execute<Array<{ pushType: number; settings: AnyPushSettings }>>(
      `select push_type as "pushType", settings from push_settings where account_id = ? order by push_type`,
      [accountId],
    );
  const found: Partial<Record<PushKind, AnyPushSettings>> = {};
  for (const row of rows) {
    const kind = pushKindOf(row.pushType);
    if (kind) found[kind] = row.settings;
  }
  return found as Partial<PushSettingsByKind>;
}

/**
 * Writes one kind's settings in one statement. A webhook keeps its signing secret when its
 * other settings change (receivers keep verifying); the first save makes one. Returns the
 * settings as stored, and whether the signing secret is new (the only time it is shown).
 */
export async function savePushSettings<K extends PushKind>(
  em: EntityManager,
  accountId: number,
  kind: K,
  input: PushSettingsInput<K>,
): Promise<{ settings: PushSettingsByKind[K]; newSecret: boolean } | null> {
  const secret = kind === 'fcm' ? null : `whsec_${randomBytes(32).toString('base64')}`;
  const rows = await em.getConnection().execute<Array<{ settings: PushSettingsByKind[K]; inserted: boolean }>>(
    `insert into push_settings (account_id, push_type, settings)
     select a.id, ?, ?::jsonb from accounts a where a.id = ?
     on conflict (account_id, push_type) do update
       set settings = case when push_settings.settings->>'signingSecret' is not null
                           then excluded.settings || jsonb_build_object('signingSecret', push_settings.settings->'signingSecret')
                           else excluded.settings end,
           updated_at = now()
     returning settings, (xmax = 0) as inserted`,
    [PUSH_KINDS[kind], JSON.stringify(secret === null ? input : { ...input, signingSecret: secret }), accountId],
    'all',
    em.getTransactionContext(),
  );
  const row = rows[0];
  if (!row) return null;
  return { settings: row.settings, newSecret: secret !== null && row.inserted };
}

/** False when there was nothing to delete. Pending pushes of that kind then end dead (nothing to send them with). */
export async function deletePushSettings(em: EntityManager, accountId: number, kind: PushKind): Promise<boolean> {
  const rows = await em
    .getConnection()
    .execute<Array<{ account_id: number }>>(
      `delete from push_settings where account_id = ? and push_type = ? returning account_id`,
      [accountId, PUSH_KINDS[kind]],
      'all',
      em.getTransactionContext(),
    );
  return rows.length > 0;
}
