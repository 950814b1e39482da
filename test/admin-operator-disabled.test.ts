// Disabling an operator: no sign-in, every session refused at once, not oneself; enabling again
// lets them sign in, with fresh sessions only.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { adminToken } from './support/factories.ts';
import { client } from './support/http.ts';
import { sharedServer } from './support/server.ts';

describe('Admin API: disabling an operator', () => {
  const api = () => client(sharedServer().url);
  const password = 'disabled password';

  async function newOperator(grants: Array<{ permission: string; accountId: number | null }>) {
    const email = `disabled-${randomBytes(6).toString('hex')}@palaver.test`;
    const created = await api().post<{ id: number; disabledAt: string | null }>('/adminApi/operators', {
      token: await adminToken(),
      json: { email, password, grants },
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.data.disabledAt).to.equal(null);
    return { id: created.body.data.id, email };
  }

  async function signIn(email: string) {
    return api().post<{ token: string }>('/adminApi/login', { json: { email, password } });
  }

  it('refuses their sign-in and their existing token, and lets them in again once enabled', async () => {
    const manager = await newOperator([{ permission: 'operators:manage', accountId: null }]);
    const target = await newOperator([]);
    const managerToken = (await signIn(manager.email)).body.data.token;
    const targetToken = (await signIn(target.email)).body.data.token;
    expect((await api().get('/adminApi/session', { token: targetToken })).status).to.equal(200);

    const disabled = await api().put<{ id: number; disabledAt: string | null }>(`/adminApi/operators/${target.id}/disabled`, {
      token: managerToken,
      json: { disabled: true },
    });
    expect(disabled.status, disabled.text).to.equal(200);
    expect(disabled.body.data.id).to.equal(target.id);
    expect(disabled.body.data.disabledAt).to.be.a('string');

    const refusedSession = await api().get('/adminApi/session', { token: targetToken });
    expect(refusedSession.status).to.equal(401);
    expect(refusedSession.body.notifications).to.deep.equal([{ type: 'error', message: 'invalid_token' }]);
    const refusedLogin = await signIn(target.email);
    expect(refusedLogin.status).to.equal(401);
    expect(refusedLogin.body.notifications).to.deep.equal([{ type: 'error', message: 'operator_disabled' }]);
    // A wrong password says nothing about the operator being disabled.
    const wrong = await api().post('/adminApi/login', { json: { email: target.email, password: 'not it' } });
    expect(wrong.body.notifications).to.deep.equal([{ type: 'error', message: 'invalid_credentials' }]);

    const listed = await api().get<Array<{ id: number; disabledAt: string | null }>>('/adminApi/operators', { token: managerToken });
    expect(listed.body.data.find((o) => o.id === target.id)?.disabledAt).to.equal(disabled.body.data.disabledAt);

    const enabled = await api().put<{ disabledAt: string | null }>(`/adminApi/operators/${target.id}/disabled`, {
      token: managerToken,
      json: { disabled: false },
    });
    expect(enabled.status, enabled.text).to.equal(200);
    expect(enabled.body.data.disabledAt).to.equal(null);
    const again = await signIn(target.email);
    expect(again.status, again.text).to.equal(200);
    expect((await api().get('/adminApi/session', { token: again.body.data.token })).status).to.equal(200);
    // The session from before the disabling was ended, not just suspended.
    expect((await api().get('/adminApi/session', { token: targetToken })).status).to.equal(401);
  });

  it('refuses disabling oneself with 409 cannot_disable_self, and changes nothing', async () => {
    const manager = await newOperator([{ permission: 'operators:manage', accountId: null }]);
    const token = (await signIn(manager.email)).body.data.token;
    const self = await api().put(`/adminApi/operators/${manager.id}/disabled`, { token, json: { disabled: true } });
    expect(self.status).to.equal(409);
    expect(self.body.notifications).to.deep.equal([{ type: 'error', message: 'cannot_disable_self' }]);
    expect((await api().get('/adminApi/session', { token })).status).to.equal(200);
  });

  it('refuses taking operators:manage everywhere from oneself with 409 cannot_remove_own_operators_manage; others may', async () => {
    const manager = await newOperator([
      { permission: 'operators:manage', accountId: null },
      { permission: 'accounts:read', accountId: null },
    ]);
    const token = (await signIn(manager.email)).body.data.token;
    const own = (grants: Array<{ permission: string; accountId: number | null }>) =>
      api().put(`/adminApi/operators/${manager.id}/grants`, { token, json: { grants } });
    for (const grants of [[], [{ permission: 'accounts:read', accountId: null }], [{ permission: 'operators:manage', accountId: 1 }]]) {
      const refused = await own(grants);
      expect(refused.status, JSON.stringify(grants)).to.equal(409);
      expect(refused.body.notifications).to.deep.equal([{ type: 'error', message: 'cannot_remove_own_operators_manage' }]);
    }
    // Nothing changed: the manager still manages operators.
    expect((await api().get('/adminApi/operators', { token })).status).to.equal(200);
    // Keeping it (or `*`) everywhere is a change like any other.
    const kept = await own([{ permission: '*', accountId: null }]);
    expect(kept.status, kept.text).to.equal(200);
    // Another operator who manages operators may take it.
    const taken = await api().put(`/adminApi/operators/${manager.id}/grants`, {
      token: await adminToken(),
      json: { grants: [{ permission: 'accounts:read', accountId: null }] },
    });
    expect(taken.status, taken.text).to.equal(200);
    expect((await api().get('/adminApi/operators', { token })).status).to.equal(403);
  });

  it('answers 404 for an unknown operator and 422 naming the field for a bad body', async () => {
    const token = await adminToken();
    const unknown = await api().put('/adminApi/operators/2147483000/disabled', { token, json: { disabled: true } });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.notifications).to.deep.equal([{ type: 'error', message: 'operator_not_found' }]);
    const bad = await api().put('/adminApi/operators/2147483000/disabled', { token, json: { disabled: 'yes' } });
    expect(bad.status).to.equal(422);
    expect(bad.body.notifications.map((n) => n.field)).to.deep.equal(['body.disabled']);
  });
});
