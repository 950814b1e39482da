// Push settings in the Admin API: validated when saved (422 naming the field, nothing
// written), secrets never returned by a read (which says they are set), the webhook signing
// secret shown once, replaced and deleted settings.
import { generateKeyPairSync } from 'node:crypto';
import { expect } from 'chai';
import { adminToken, createAccount } from './support/factories.ts';
import { client } from './support/http.ts';
import { serviceAccount } from './support/push.ts';
import { sharedServer } from './support/server.ts';

interface Shown {
  fcm: Record<string, unknown> | null;
  webhook: Record<string, unknown> | null;
  oauthWebhook: Record<string, unknown> | null;
}

describe('push settings (Admin API)', function () {
  this.timeout(30_000);
  const api = () => client(sharedServer().url);
  const google = serviceAccount('palaver-settings');
  const fcmBody = {
    serviceAccount: {
      type: 'service_account',
      project_id: google.project_id,
      client_email: google.client_email,
      private_key: google.private_key,
    },
  };

  async function read(accountId: number) {
    const answer = await api().get<Shown>(`/adminApi/accounts/${accountId}/push-settings`, { token: await adminToken() });
    expect(answer.status, answer.text).to.equal(200);
    return answer;
  }

  it('starts empty, and refuses bad settings with 422 naming each field, writing nothing', async () => {
    const { id } = await createAccount();
    const token = await adminToken();
    expect((await read(id)).body.data).to.deep.equal({ fcm: null, webhook: null, oauthWebhook: null });

    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const cases: Array<[string, unknown, string[]]> = [
      ['fcm', { serviceAccount: { ...fcmBody.serviceAccount, private_key: 'not a key' } }, ['body.serviceAccount.private_key']],
      ['fcm', { serviceAccount: { ...fcmBody.serviceAccount, private_key: ec } }, ['body.serviceAccount.private_key']],
      [
        'fcm',
        { serviceAccount: { ...fcmBody.serviceAccount, project_id: 'Bad Project', client_email: 'nope' } },
        ['body.serviceAccount.project_id', 'body.serviceAccount.client_email'],
      ],
      ['fcm', {}, ['body.serviceAccount']],
      ['webhook', { url: 'ftp://push.example.com' }, ['body.url']],
      ['webhook', { url: 'https://push.example.com', extra: 1 }, ['body']],
      [
        'oauth-webhook',
        { url: 'https://push.example.com', tokenUrl: 'nope', clientId: '', clientSecret: '' },
        ['body.tokenUrl', 'body.clientId', 'body.clientSecret'],
      ],
    ];
    for (const [kind, json, fields] of cases) {
      const answer = await api().put(`/adminApi/accounts/${id}/push-settings/${kind}`, { token, json });
      expect(answer.status, `${kind} ${answer.text}`).to.equal(422);
      expect(answer.body.notifications.map((n) => n.message)).to.satisfy((m: string[]) => m.every((x) => x === 'validation_failed'));
      expect([...new Set(answer.body.notifications.map((n) => n.field))], answer.text).to.have.members(fields);
    }
    const unknownKind = await api().put(`/adminApi/accounts/${id}/push-settings/apns`, { token, json: {} });
    expect(unknownKind.status).to.equal(422);
    expect(unknownKind.body.notifications[0]?.field).to.equal('params.kind');
    expect((await read(id)).body.data, 'nothing written').to.deep.equal({ fcm: null, webhook: null, oauthWebhook: null });

    const missing = await api().put('/adminApi/accounts/2147483000/push-settings/webhook', {
      token,
      json: { url: 'https://push.example.com' },
    });
    expect(missing.status).to.equal(404);
  });

  it('never returns a secret: it says which are set; the signing secret is shown once', async () => {
    const { id } = await createAccount();
    const token = await adminToken();
    const fcm = await api().put(`/adminApi/accounts/${id}/push-settings/fcm`, { token, json: fcmBody });
    expect(fcm.status, fcm.text).to.equal(200);
    expect(fcm.body.data).to.deep.equal({
      kind: 'fcm',
      projectId: 'palaver-settings',
      clientEmail: google.client_email,
      privateKeySet: true,
    });

    const hook = await api().put<{ signingSecret: string }>(`/adminApi/accounts/${id}/push-settings/webhook`, {
      token,
      json: { url: 'https://push.example.com/a' },
    });
    expect(hook.status, hook.text).to.equal(200);
    expect(hook.body.data.signingSecret).to.match(/^whsec_/);
    const changed = await api().put(`/adminApi/accounts/${id}/push-settings/webhook`, {
      token,
      json: { url: 'https://push.example.com/b' },
    });
    expect(changed.body.data, 'kept, not shown again').to.deep.equal({
      kind: 'webhook',
      url: 'https://push.example.com/b',
      signingSecretSet: true,
    });

    const oauth = await api().put(`/adminApi/accounts/${id}/push-settings/oauth-webhook`, {
      token,
      json: {
        url: 'https://push.example.com/o',
        tokenUrl: 'https://auth.example.com/token',
        clientId: 'palaver',
        clientSecret: 'very secret value',
      },
    });
    expect(oauth.status, oauth.text).to.equal(200);

    const shown = await read(id);
    expect(shown.body.data).to.deep.equal({
      fcm: { projectId: 'palaver-settings', clientEmail: google.client_email, privateKeySet: true },
      webhook: { url: 'https://push.example.com/b', signingSecretSet: true },
      oauthWebhook: {
        url: 'https://push.example.com/o',
        signingSecretSet: true,
        tokenUrl: 'https://auth.example.com/token',
        clientId: 'palaver',
        clientSecretSet: true,
        scope: null,
      },
    });
    for (const secret of ['PRIVATE KEY', 'very secret value', hook.body.data.signingSecret]) {
      expect(shown.text).not.to.include(secret);
      expect(changed.text + oauth.text + fcm.text).not.to.include(secret);
    }

    const deleted = await api().delete(`/adminApi/accounts/${id}/push-settings/fcm`, { token });
    expect(deleted.status, deleted.text).to.equal(200);
    const again = await api().delete(`/adminApi/accounts/${id}/push-settings/fcm`, { token });
    expect(again.status).to.equal(404);
    expect(again.body.notifications[0]?.message).to.equal('push_settings_not_found');
    expect((await read(id)).body.data.fcm).to.equal(null);
  });
});
