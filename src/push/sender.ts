// One push attempt to one device, by its push type: FCM, the account's push webhook, or that
// webhook behind an OAuth token. The device and settings are the ones read when the push was
// claimed, so a token the app replaced meanwhile is the one used.
import got, { RequestError } from 'got';
import type { WebhookSender } from '../deliveries/sender.ts';
import type { ClaimedPush } from '../deliveries/claims.ts';
import { FcmClient, type FcmOptions } from './fcm.ts';
import { OAuthTokens } from './oauth-token.ts';
import type { PushOutcome } from './outcome.ts';
import { PushType, type FcmSettings, type OAuthWebhookSettings, type WebhookSettings } from './settings.ts';

export class PushSender {
  private readonly fcm: FcmClient;
  private readonly oauth: OAuthTokens;

  /** Webhook pushes go through the Services' sender: same signing, SSRF filter, timeout. */
  constructor(
    private readonly webhooks: WebhookSender,
    options: FcmOptions,
  ) {
    const base = { timeout: { request: options.timeoutMs }, retry: { limit: 0 }, throwHttpErrors: false, followRedirect: false };
    this.fcm = new FcmClient(
      options,
      got.extend({ ...base, headers: { 'content-type': 'application/json', 'user-agent': 'Palaver-Push/1' } }),
    );
    this.oauth = new OAuthTokens(got.extend({ ...base, agent: webhooks.agent, headers: { 'user-agent': 'Palaver-Push/1' } }));
  }

  async send(push: ClaimedPush): Promise<PushOutcome> {
    // The device stopped accepting pushes, or the account removed the settings, since the push
    // was written: nothing can send it. Dead, so the log says why.
    if (!push.pushEnabled || push.pushToken === null || push.pushSettings === null) {
      return {
        kind: 'undeliverable',
        status: null,
        error: 'device no longer accepts pushes (switched off, no token, or no push settings for its type)',
      };
    }
    const data = JSON.parse(push.payload) as Record<string, string>;
    try {
      switch (push.pushType) {
        case PushType.fcm:
          return await this.fcm.send(push.pushSettings as FcmSettings, { token: push.pushToken, deviceType: push.deviceType, data });
        case PushType.webhook:
          return await this.webhook(push, push.pushSettings as WebhookSettings, data, undefined);
        case PushType.oauthWebhook:
          return await this.oauthWebhook(push, push.pushSettings as OAuthWebhookSettings, data);
        default:
          return { kind: 'undeliverable', status: null, error: `unknown push type ${String(push.pushType)}` };
      }
    } catch (err) {
      // Connection errors, timeouts, refused addresses, a token URL that failed: all may heal.
      const error = err instanceof RequestError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
      return { kind: 'retry', status: null, error, retryAfterMs: null };
    }
  }

  private async oauthWebhook(push: ClaimedPush, settings: OAuthWebhookSettings, data: Record<string, string>): Promise<PushOutcome> {
    const token = await this.oauth.token(settings);
    const outcome = await this.webhook(push, settings, data, `Bearer ${token}`);
    // The token was refused (revoked, or expired early): the next attempt asks for a new one.
    if (outcome.status === 401) {
      this.oauth.forget(settings);
      return { kind: 'retry', status: 401, error: 'HTTP 401: access token refused', retryAfterMs: null };
    }
    return outcome;
  }

  /** The body names the device's token and type, and carries the data map the app reads. */
  private async webhook(
    push: ClaimedPush,
    settings: WebhookSettings,
    data: Record<string, string>,
    authorization: string | undefined,
  ): Promise<PushOutcome> {
    const body = JSON.stringify({
      pushToken: push.pushToken,
      pushType: push.pushType,
      deviceType: push.deviceType,
      userId: push.userId,
      data,
    });
    const outcome = await this.webhooks.send({ url: settings.url, id: push.id, body, secrets: [settings.signingSecret], authorization });
    // A push webhook's 410: this token is gone (there is no Service to switch off).
    if (outcome.kind === 'gone') return { kind: 'unregistered', status: 410, error: 'HTTP 410: token gone' };
    return outcome;
  }
}
