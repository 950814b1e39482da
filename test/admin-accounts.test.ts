import { expect } from 'chai';
import { adminToken, createAccount, createService, type AccountData } from './support/factories.ts';
import { client } from './support/http.ts';
import { sharedServer, startTestServer } from './support/server.ts';
import { Widget } from './support/widget.ts';

interface Overview extends AccountData {
  services: Array<Record<string, unknown>>;
  defaultService: Record<string, unknown> | null;
}

describe('Admin API: accounts and Services', () => {
  const api = () => client(sharedServer().url);

  it('creates an account with a public identification and an authorization secret', async () => {
    const answer = await api().post<AccountData>('/adminApi/accounts', {
      token: await adminToken(),
      json: { name: '  Acme Support  ' },
    });
    expect(answer.status).to.equal(201);
    const account = answer.body.data;
    expect(account.id).to.be.a('number');
    expect(account.name).to.equal('Acme Support');
    expect(account.identification).to.match(/^[A-Za-z0-9]{16}$/);
    expect(account.authorizationSecret).to.match(/^[0-9a-f]{64}$/);
    expect(account.defaultServiceId).to.equal(null);
  });

  it('shows the authorization secret only when the account is made or the secret rotated; the old one verifies for a grace period', async () => {
    const token = await adminToken();
    const account = await createAccount();
    await createService(account.id, { name: 'Bot' });
    const listed = await api().get('/adminApi/accounts', { token });
    const shown = await api().get(`/adminApi/accounts/${account.id}`, { token });
    const edited = await api().patch(`/adminApi/accounts/${account.id}`, { token, json: { name: 'Renamed' } });
    for (const answer of [listed, shown, edited]) {
      expect(answer.status).to.equal(200);
      expect(answer.text, 'whoever holds it signs in as any customer').to.not.contain(account.authorizationSecret);
      expect(answer.text).to.not.contain('authorizationSecret');
    }

    // A customer signed in with a header from the old secret, before the rotation.
    const before = new Widget(account).signIn('customer-before-rotation');
    expect((await before.register()).status).to.equal(200);
    const rotated = await api().post<{ authorizationSecret: string; previousSecretExpiresAt: string }>(
      `/adminApi/accounts/${account.id}/authorization-secret`,
      { token },
    );
    expect(rotated.status, rotated.text).to.equal(200);
    const { authorizationSecret, previousSecretExpiresAt } = rotated.body.data;
    expect(authorizationSecret)
      .to.match(/^[0-9a-f]{64}$/)
      .and.not.equal(account.authorizationSecret);
    expect(Date.parse(previousSecretExpiresAt) - Date.now()).to.be.within(86_000_000, 86_400_000);
    // Both verify during the grace period: the old header, and a new one.
    expect((await before.messages()).status).to.equal(200);
    const after = new Widget({ ...account, authorizationSecret }).signIn('customer-after-rotation');
    expect((await after.register()).status).to.equal(200);
    const forged = new Widget({ ...account, authorizationSecret: 'f'.repeat(64) }).signIn('customer-forged');
    expect((await forged.register()).body.notifications[0]?.message).to.equal('invalid_authorization');
    const unknown = await api().post('/adminApi/accounts/2000000000/authorization-secret', { token });
    expect(unknown.status).to.equal(404);
  });

  it('refuses a header signed with the rotated-out secret once its grace period is over', async () => {
    const server = await startTestServer({ client: { authorizationSecretGraceSeconds: 0 } });
    try {
      const local = client(server.url);
      const { email, password } = server.config.admin;
      const token = (await local.post<{ token: string }>('/adminApi/login', { json: { email, password } })).body.data.token;
      const account = (await local.post<AccountData>('/adminApi/accounts', { token, json: { name: 'No grace' } })).body.data;
      await local.post(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 'Bot' } });
      const old = new Widget(account, undefined, undefined, '', server.url).signIn('customer-old-secret');
      expect((await old.register()).status).to.equal(200);
      const rotated = await local.post<{ authorizationSecret: string }>(`/adminApi/accounts/${account.id}/authorization-secret`, { token });
      expect(rotated.status).to.equal(200);
      const refused = await old.messages();
      expect(refused.status).to.equal(401);
      expect(refused.body.notifications[0]?.message).to.equal('invalid_authorization');
      const renewed = new Widget(
        { ...account, authorizationSecret: rotated.body.data.authorizationSecret },
        old.deviceId,
        undefined,
        '',
        server.url,
      );
      expect((await renewed.signIn('customer-old-secret').messages()).status).to.equal(200);
    } finally {
      await server.stop();
    }
  });

  it('refuses an account without a name, listing the problem', async () => {
    const answer = await api().post('/adminApi/accounts', { token: await adminToken(), json: { name: '   ' } });
    expect(answer.status).to.equal(422);
    expect(answer.body.notifications[0]).to.include({ message: 'validation_failed', field: 'body.name' });
  });

  it('makes the first Service the default and shows the API key only at creation', async () => {
    const account = await createAccount();
    const first = await createService(account.id, { name: 'Bot', webhookUrl: 'https://bot.example.com/hook' });
    expect(first.isDefault).to.equal(true);
    expect(first.identification).to.match(/^[A-Za-z0-9]{16}$/);
    expect(first.webhookUrl).to.equal('https://bot.example.com/hook');
    expect(first.apiKey).to.match(/^pk_[\w-]{43}$/);
    const secret = Buffer.from(first.signingSecret.replace(/^whsec_/, ''), 'base64');
    expect(first.signingSecret).to.match(/^whsec_/);
    expect(secret.length).to.be.within(24, 64);

    const second = await createService(account.id, { name: 'Desk' });
    expect(second.isDefault).to.equal(false);
    expect(second.apiKey).to.not.equal(first.apiKey);

    const overview = await api().get<Overview>(`/adminApi/accounts/${account.id}`, { token: await adminToken() });
    expect(overview.status).to.equal(200);
    expect(overview.body.data.defaultServiceId).to.equal(first.id);
    expect(overview.body.data.defaultService).to.include({ id: first.id, identification: first.identification });
    expect(overview.body.data.services.map((s) => s.id)).to.deep.equal([first.id, second.id]);
    expect(overview.text).to.not.contain(first.apiKey);
    expect(overview.text).to.not.contain(first.signingSecret);
  });

  it('gives an account exactly one default when its first Services are created at once', async () => {
    const account = await createAccount();
    const created = await Promise.all([1, 2, 3, 4, 5].map((n) => createService(account.id, { name: `S${n}` })));
    expect(created.filter((s) => s.isDefault)).to.have.length(1);
    const overview = await api().get<Overview>(`/adminApi/accounts/${account.id}`, { token: await adminToken() });
    expect(overview.body.data.defaultServiceId).to.equal(created.find((s) => s.isDefault)?.id);
  });

  it('refuses bad Service input and unknown accounts without writing anything', async () => {
    const account = await createAccount();
    const token = await adminToken();
    const bad = await api().post(`/adminApi/accounts/${account.id}/services`, {
      token,
      json: { name: '', webhookUrl: 'ftp://example.com' },
    });
    expect(bad.status).to.equal(422);
    expect(bad.body.notifications.map((n) => n.field)).to.have.members(['body.name', 'body.webhookUrl']);

    const wrongType = await api().post(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 42 } });
    expect(wrongType.status).to.equal(422);

    const missing = await api().post('/adminApi/accounts/999999999/services', { token, json: { name: 'X' } });
    expect(missing.status).to.equal(404);
    expect(missing.body.notifications[0]?.message).to.equal('account_not_found');

    const badId = await api().get('/adminApi/accounts/abc', { token });
    expect(badId.status).to.equal(422);
    expect(badId.body.notifications[0]?.field).to.equal('params.accountId');

    const overview = await api().get<Overview>(`/adminApi/accounts/${account.id}`, { token });
    expect(overview.body.data.services).to.have.length(0);
    expect(overview.body.data.defaultService).to.equal(null);
  });

  it('updates a Service: name, webhook URL, and switching it off and on', async () => {
    const account = await createAccount();
    const service = await createService(account.id, { name: 'Old name' });
    const token = await adminToken();
    const path = `/adminApi/services/${service.id}`;

    const renamed = await api().patch<Record<string, unknown>>(path, {
      token,
      json: { name: 'New name', webhookUrl: 'https://hooks.example.com/palaver' },
    });
    expect(renamed.status).to.equal(200);
    expect(renamed.body.data).to.include({
      name: 'New name',
      webhookUrl: 'https://hooks.example.com/palaver',
      enabled: true,
      isDefault: true,
    });

    const off = await api().patch<Record<string, unknown>>(path, { token, json: { enabled: false } });
    expect(off.body.data).to.include({ enabled: false, disabledReason: 'operator' });
    const on = await api().patch<Record<string, unknown>>(path, { token, json: { enabled: true, webhookUrl: null } });
    expect(on.body.data).to.include({ enabled: true, disabledReason: null, webhookUrl: null });

    const empty = await api().patch(path, { token, json: {} });
    expect(empty.status).to.equal(422);
    const unknownField = await api().patch(path, { token, json: { colour: 'blue' } });
    expect(unknownField.status).to.equal(422);
    const badUrl = await api().patch(path, { token, json: { webhookUrl: 'javascript:alert(1)' } });
    expect(badUrl.status).to.equal(422);
    const missing = await api().patch('/adminApi/services/999999999', { token, json: { name: 'x' } });
    expect(missing.status).to.equal(404);
    expect(missing.body.notifications[0]?.message).to.equal('service_not_found');

    const overview = await api().get<Overview>(`/adminApi/accounts/${account.id}`, { token });
    expect(overview.body.data.services[0]).to.include({ name: 'New name', enabled: true });
  });
});
