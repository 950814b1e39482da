// An account's push settings as the Admin API shows them: addresses and ids, and for every
// secret only whether it is set (the FCM private key, the OAuth client secret and the
// webhook signing secret are never returned by a read).
import type { FcmSettings, OAuthWebhookSettings, PushSettingsByKind, WebhookSettings } from '../push/settings.ts';

function presentFcm(s: FcmSettings) {
  return { projectId: s.projectId, clientEmail: s.clientEmail, privateKeySet: true };
}

function presentWebhook(s: WebhookSettings) {
  return { url: s.url, signingSecretSet: true };
}

function presentOAuthWebhook(s: OAuthWebhookSettings) {
  return { ...presentWebhook(s), tokenUrl: s.tokenUrl, clientId: s.clientId, clientSecretSet: true, scope: s.scope };
}

/** Every kind, null where the account has no settings. */
export function presentPushSettings(settings: Partial<PushSettingsByKind>) {
  return {
    fcm: settings.fcm ? presentFcm(settings.fcm) : null,
    webhook: settings.webhook ? presentWebhook(settings.webhook) : null,
    oauthWebhook: settings['oauth-webhook'] ? presentOAuthWebhook(settings['oauth-webhook']) : null,
  };
}
