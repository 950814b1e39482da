import { expect } from 'chai';
import { createOperator } from '../src/tenancy/operators.ts';
import { createAccount } from './support/factories.ts';
import { client } from './support/http.ts';
import { TEST_ADMIN, sharedServer } from './support/server.ts';

describe('Admin API: login and tokens', () => {
  const api = () => client(sharedServer().url);

  it('logs in with the bootstrap operator from PALAVER_ADMIN_EMAIL / PALAVER_ADMIN_PASSWORD', async () => {
    const answer = await api().post<{ token: string; expiresAt: string }>('/adminApi/login', { json: TEST_ADMIN });
    expect(answer.status).to.equal(200);
    expect(answer.body.data.token).to.match(/^pat_[\w-]{43}$/);
    expect(Date.parse(answer.body.data.expiresAt)).to.be.greaterThan(Date.now());

    const upper = await api().post('/adminApi/login', {
      json: { ...TEST_ADMIN, email: TEST_ADMIN.email.toUpperCase() },
    });
    expect(upper.status, 'email is case-insensitive').to.equal(200);
  });

  it('refuses a wrong password and an unknown email alike', async () => {
    const wrong = await api().post('/adminApi/login', { json: { ...TEST_ADMIN, password: 'not the password' } });
    const unknown = await api().post('/adminApi/login', { json: { email: 'nobody@palaver.test', password: 'x' } });
    for (const answer of [wrong, unknown]) {
      expect(answer.status).to.equal(401);
      expect(answer.body.status).to.equal('ERROR');
      expect(answer.body.notifications).to.deep.equal([{ type: 'error', message: 'invalid_credentials' }]);
      expect(answer.body.data).to.equal(null);
    }
  });

  it('lists every problem of a bad login body', async () => {
    const answer = await api().post('/adminApi/login', { json: { email: 'not-an-email' } });
    expect(answer.status).to.equal(422);
    const fields = answer.body.notifications.map((n) => n.field);
    expect(fields).to.have.members(['body.email', 'body.password']);
    for (const n of answer.body.notifications) {
      expect(n).to.include({ type: 'error', message: 'validation_failed' });
      expect(n.detail).to.be.a('string').and.not.empty;
    }
  });

  it('refuses a missing, malformed or unknown token with 401', async () => {
    const missing = await api().post('/adminApi/accounts', { json: { name: 'x' } });
    expect(missing.status).to.equal(401);
    expect(missing.body.notifications[0]?.message).to.equal('missing_token');
    expect(missing.headers.get('www-authenticate')).to.equal('Bearer');

    const malformed = await api().get('/adminApi/accounts/1', { headers: { authorization: 'Basic abc' } });
    expect(malformed.status).to.equal(401);
    expect(malformed.body.notifications[0]?.message).to.equal('missing_token');

    const unknown = await api().get('/adminApi/accounts/1', { token: 'pat_forged' });
    expect(unknown.status).to.equal(401);
    expect(unknown.body.notifications[0]?.message).to.equal('invalid_token');
  });

  it('checks the operator permission for the account, and changes nothing without it', async () => {
    const account = await createAccount();
    const other = await createAccount();
    const email = `limited-${Date.now()}@palaver.test`;
    await createOperator(sharedServer().deps.db.orm.em.fork(), {
      email,
      password: 'limited password',
      hashCost: sharedServer().config.security.passwordHashCost,
      // A new Service's answer holds its API key: services:edit with conversations:read.
      grants: [
        { accountId: account.id, permission: 'services:edit' },
        { accountId: account.id, permission: 'conversations:read' },
      ],
    });
    const login = await api().post<{ token: string }>('/adminApi/login', { json: { email, password: 'limited password' } });
    const token = login.body.data.token;

    const allowed = await api().post(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 'Mine' } });
    expect(allowed.status).to.equal(201);

    const denied = await api().post(`/adminApi/accounts/${other.id}/services`, { token, json: { name: 'Theirs' } });
    expect(denied.status).to.equal(403);
    expect(denied.body.notifications[0]?.message).to.equal('permission_denied');

    const noCreate = await api().post('/adminApi/accounts', { token, json: { name: 'New' } });
    expect(noCreate.status).to.equal(403);

    const noRead = await api().get(`/adminApi/accounts/${account.id}`, { token });
    expect(noRead.status, 'services:edit does not include accounts:read').to.equal(403);

    const admin = await api().post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN });
    const otherNow = await api().get<{ services: unknown[] }>(`/adminApi/accounts/${other.id}`, { token: admin.body.data.token });
    expect(otherNow.body.data.services).to.have.length(0);
  });
});
