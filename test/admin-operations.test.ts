// The rest of the Admin API: the default Service and its action, API keys, signing-secret
// rotation with both signatures during the grace period, login rate limits.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createOperator } from '../src/tenancy/operators.ts';
import { enqueueCommitted, verify, waitForState } from './support/deliveries.ts';
import { adminToken, createService } from './support/factories.ts';
import { client } from './support/http.ts';
import { expectNothingEnqueued, expectOutbox, receivedExactly } from './support/outbox.ts';
import { Receiver } from './support/receiver.ts';
import { sharedServer, startTestServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

describe('Admin API: operations', function () {
  this.timeout(60_000);
  const api = () => client(sharedServer().url);
  let t: Tenant;

  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(() => t.receiver.close());

  describe('default Service', () => {
    it('needs services:edit: without it, 403 and nothing is delivered', async () => {
      const other = await createService(t.account.id, { name: 'Other' });
      const email = `viewer-${randomBytes(4).toString('hex')}@palaver.test`;
      await createOperator(sharedServer().deps.db.orm.em.fork(), {
        email,
        password: 'viewer password',
        hashCost: sharedServer().config.security.passwordHashCost,
        grants: [{ accountId: t.account.id, permission: 'accounts:read' }],
      });
      const token = (await api().post<{ token: string }>('/adminApi/login', { json: { email, password: 'viewer password' } })).body.data
        .token;
      const answer = await api().put(`/adminApi/accounts/${t.account.id}/default-service`, {
        token,
        json: { serviceIdentification: other.identification },
      });
      expect(answer.status).to.equal(403);
      // Read right after the answer: a change would have written its deliveries in its transaction.
      await expectNothingEnqueued([t.service.id, other.id]);
      const overview = await api().get<{ defaultServiceId: number }>(`/adminApi/accounts/${t.account.id}`, { token });
      expect(overview.body.data.defaultServiceId).to.equal(t.service.id);
    });

    it('delivers the exact changeDefaultService action to every Service, and new users get the new default', async () => {
      const otherReceiver = await Receiver.start();
      try {
        const other = await createService(t.account.id, { name: 'Night shift', webhookUrl: `${otherReceiver.url}/hook` });
        const token = await adminToken();
        const me = await api().post<{ token: string }>('/adminApi/login', {
          json: { email: sharedServer().config.admin.email, password: sharedServer().config.admin.password },
        });
        expect(me.status).to.equal(200);

        const unchanged = await api().put<{ changed: boolean }>(`/adminApi/accounts/${t.account.id}/default-service`, {
          token,
          json: { serviceIdentification: t.service.identification },
        });
        expect(unchanged.body.data.changed).to.equal(false);
        await expectNothingEnqueued([t.service.id, other.id], 'an unchanged default is not announced: deliveries');

        const changed = await api().put<{ changed: boolean; defaultServiceId: number }>(
          `/adminApi/accounts/${t.account.id}/default-service`,
          { token, json: { serviceIdentification: other.identification } },
        );
        expect(changed.status).to.equal(200);
        expect(changed.body.data).to.include({ changed: true, defaultServiceId: other.id });

        await expectOutbox({ serviceId: t.service.id }, 1, 'the action to the old default');
        await expectOutbox({ serviceId: other.id }, 1, 'the action to the new default');
        const [toOld] = await receivedExactly(t.receiver, t.service.id, 1);
        const [toNew] = await receivedExactly(otherReceiver, other.id, 1);
        const payload = toOld?.json as { body: { initiatedBy: string } };
        expect(payload).to.deep.equal({
          type: 'service',
          accountIdentification: t.account.identification,
          body: {
            action: 'changeDefaultService',
            metadata: '',
            initiatedBy: payload.body.initiatedBy,
            oldDefaultService: { name: 'Owner', identification: t.service.identification },
            newDefaultService: { name: 'Night shift', identification: other.identification },
          },
        });
        expect(payload.body.initiatedBy).to.match(/^op_[A-Za-z0-9]{12}$/);
        expect(toNew?.json).to.deep.equal(toOld?.json);

        const widget = new Widget(t.account);
        await widget.register();
        await widget.send('who owns me?');
        await expectOutbox({ serviceId: t.service.id }, 1, 'the old default hears nothing of the new user: deliveries');
        const [, message] = await receivedExactly(otherReceiver, other.id, 2);
        expect((message?.json as { message: string }).message).to.equal('who owns me?');

        const unknown = await api().put(`/adminApi/accounts/${t.account.id}/default-service`, {
          token,
          json: { serviceIdentification: 'missing' },
        });
        expect(unknown.status).to.equal(404);
        await expectOutbox({ serviceId: other.id }, 2, 'a refused change announces nothing: deliveries');
      } finally {
        await otherReceiver.close();
      }
    });
  });

  describe('API keys', () => {
    it('adds keys, lists them without secrets, and revokes one so that it stops working at once', async () => {
      const token = await adminToken();
      const added = await api().post<{ id: number; apiKey: string; prefix: string }>(`/adminApi/services/${t.service.id}/keys`, { token });
      expect(added.status).to.equal(201);
      expect(added.body.data.apiKey).to.match(/^pk_/);
      const list = await api().get<Array<{ id: number; revokedAt: string | null }>>(`/adminApi/services/${t.service.id}/keys`, { token });
      expect(list.body.data).to.have.length(2);
      expect(list.text).to.not.contain(added.body.data.apiKey);

      const widget = new Widget(t.account);
      const userId = (await widget.register()).body.data.userId;
      expect((await api().get(`/users/${userId}`, { token: added.body.data.apiKey })).status).to.equal(200);
      const revoked = await api().delete<{ revokedAt: string }>(`/adminApi/services/${t.service.id}/keys/${added.body.data.id}`, { token });
      expect(revoked.status).to.equal(200);
      expect(revoked.body.data.revokedAt).to.be.a('string');
      const refused = await api().get(`/users/${userId}`, { token: added.body.data.apiKey });
      expect(refused.status).to.equal(401);
      expect((await api().get(`/users/${userId}`, { token: t.service.apiKey })).status, 'the other key still works').to.equal(200);
      expect((await api().delete(`/adminApi/services/${t.service.id}/keys/999999`, { token })).status).to.equal(404);
    });
  });

  describe('signing secret rotation', () => {
    it('signs with the new and the old secret during the grace period, so either receiver verifies', async () => {
      const token = await adminToken();
      const rotated = await api().post<{ signingSecret: string; previousSecretExpiresAt: string }>(
        `/adminApi/services/${t.service.id}/signing-secret`,
        { token },
      );
      expect(rotated.status).to.equal(200);
      expect(rotated.body.data.signingSecret)
        .to.match(/^whsec_/)
        .and.not.equal(t.service.signingSecret);
      expect(Date.parse(rotated.body.data.previousSecretExpiresAt)).to.be.greaterThan(Date.now());

      const [id] = await enqueueCommitted(sharedServer(), { recipients: [t.service.id], payload: { rotated: true } });
      await waitForState(sharedServer(), id!, 'delivered');
      const [request] = await receivedExactly(t.receiver, t.service.id, 1);
      expect(String(request?.headers['webhook-signature']).split(' ')).to.have.length(2);
      expect(verify(t.service.signingSecret, request!), 'a receiver still on the old secret').to.deep.equal({ rotated: true });
      expect(verify(rotated.body.data.signingSecret, request!), 'a receiver on the new secret').to.deep.equal({ rotated: true });
    });

    it('sends the test event as deliveries are sent: the same headers, both signatures in the grace period, the answer shown', async () => {
      const token = await adminToken();
      const [id] = await enqueueCommitted(sharedServer(), { recipients: [t.service.id], payload: { before: true } });
      await waitForState(sharedServer(), id!, 'delivered');
      const [delivery] = await receivedExactly(t.receiver, t.service.id, 1);
      const rotated = await api().post<{ signingSecret: string }>(`/adminApi/services/${t.service.id}/signing-secret`, { token });
      t.receiver.enqueue({ status: 418, body: 'é'.repeat(3000) });
      const sent = await api().post<{ webhookId: string; status: number; ok: boolean; body: string; error: null; signatures: number }>(
        `/adminApi/services/${t.service.id}/test-event`,
        { token },
      );
      expect(sent.status).to.equal(200);
      expect(sent.body.data).to.include({ status: 418, ok: false, error: null, signatures: 2 });
      expect(sent.body.data.body, 'the start of the answer, 2048 characters').to.equal('é'.repeat(2048));
      const request = t.receiver.requests[1];
      expect(request?.headers['webhook-id'])
        .to.equal(sent.body.data.webhookId)
        .and.match(/^test_/);
      expect(verify(t.service.signingSecret, request!)).to.deep.include({ type: 'test' });
      expect(verify(rotated.body.data.signingSecret, request!)).to.deep.include({ type: 'test' });
      const headers = (r: typeof request) =>
        Object.fromEntries(['user-agent', 'content-type', 'accept-encoding', 'connection'].map((name) => [name, r?.headers[name]]));
      expect(headers(request)).to.deep.equal(headers(delivery));
      expect(Object.keys(request!.headers).sort()).to.deep.equal(Object.keys(delivery!.headers).sort());
      await expectOutbox({ serviceId: t.service.id }, 1, 'the delivery before the test event, and no row for the test event');
    });

    it('signs with the new secret alone once the grace period is over', async () => {
      const server = await startTestServer({ webhooks: { secretGraceSeconds: 0 } });
      const receiver = await Receiver.start();
      try {
        const serverApi = client(server.url);
        const token = (
          await serverApi.post<{ token: string }>('/adminApi/login', {
            json: { email: server.config.admin.email, password: server.config.admin.password },
          })
        ).body.data.token;
        const account = (await serverApi.post<{ id: number }>('/adminApi/accounts', { token, json: { name: 'Grace' } })).body.data;
        const service = (
          await serverApi.post<{ id: number; signingSecret: string }>(`/adminApi/accounts/${account.id}/services`, {
            token,
            json: { name: 'S', webhookUrl: `${receiver.url}/hook` },
          })
        ).body.data;
        const rotated = await serverApi.post<{ signingSecret: string }>(`/adminApi/services/${service.id}/signing-secret`, { token });
        const [id] = await enqueueCommitted(server, { recipients: [service.id] });
        await waitForState(server, id!, 'delivered');
        const [request] = await receivedExactly(receiver, service.id, 1, undefined, server);
        expect(String(request?.headers['webhook-signature']).split(' ')).to.have.length(1);
        expect(verify(rotated.body.data.signingSecret, request!)).to.deep.equal({ n: 1 });
        expect(() => verify(service.signingSecret, request!)).to.throw();
      } finally {
        await receiver.close();
        await server.stop();
      }
    });
  });

  describe('login', () => {
    it('is rate limited per email and address', async () => {
      const server = await startTestServer({ admin: { loginRateLimit: { points: 3, durationSeconds: 900 } } });
      try {
        const serverApi = client(server.url);
        // Fresh emails: with Redis the counts outlive a test run.
        const guessed = `guess-${randomBytes(4).toString('hex')}@palaver.test`;
        const other = { email: `other-${randomBytes(4).toString('hex')}@palaver.test`, password: 'other password' };
        await createOperator(server.deps.db.orm.em.fork(), { ...other, grants: [], hashCost: server.config.security.passwordHashCost });
        const statuses = [];
        for (let i = 0; i < 5; i++) {
          statuses.push((await serverApi.post('/adminApi/login', { json: { email: guessed, password: `try ${i}` } })).status);
        }
        expect(statuses).to.deep.equal([401, 401, 401, 429, 429]);
        const real = await serverApi.post('/adminApi/login', { json: other });
        expect(real.status, 'another operator is not locked out').to.equal(200);
      } finally {
        await server.stop();
      }
    });
  });

  describe('account settings, conversations and operators', () => {
    async function operatorToken(grants: Array<{ accountId: number | null; permission: string }>) {
      const email = `op-${randomBytes(4).toString('hex')}@palaver.test`;
      const created = await api().post<{ id: number }>('/adminApi/operators', {
        token: await adminToken(),
        json: { email, password: 'operator password', grants },
      });
      expect(created.status, created.text).to.equal(201);
      const login = await api().post<{ token: string }>('/adminApi/login', { json: { email, password: 'operator password' } });
      return { id: created.body.data.id, token: login.body.data.token };
    }

    it('sets the welcome and sticky messages clients see (accounts:edit)', async () => {
      const viewer = await operatorToken([{ accountId: t.account.id, permission: 'accounts:read' }]);
      const denied = await api().patch(`/adminApi/accounts/${t.account.id}`, { token: viewer.token, json: { welcomeMessage: 'x' } });
      expect(denied.status).to.equal(403);

      const editor = await operatorToken([{ accountId: t.account.id, permission: 'accounts:edit' }]);
      const answer = await api().patch<{ welcomeMessage: string; stickyMessage: string }>(`/adminApi/accounts/${t.account.id}`, {
        token: editor.token,
        json: { welcomeMessage: 'Welcome! We answer within a minute.', stickyMessage: 'Closed on Sundays' },
      });
      expect(answer.status).to.equal(200);
      const widget = new Widget(t.account);
      await widget.register();
      const list = await widget.messages();
      expect(list.body).to.deep.include({ welcomeMessage: 'Welcome! We answer within a minute.', stickyMessage: 'Closed on Sundays' });
      expect((await api().patch(`/adminApi/accounts/${t.account.id}`, { token: editor.token, json: {} })).status).to.equal(422);
    });

    it('lists users and reads a conversation with conversations:read', async () => {
      const widget = new Widget(t.account);
      const userId = (await widget.register()).body.data.userId;
      await widget.send('visible to operators');
      const reader = await operatorToken([{ accountId: t.account.id, permission: 'conversations:read' }]);
      const users = await api().get<Array<{ id: number; kind: string }>>(`/adminApi/accounts/${t.account.id}/users`, {
        token: reader.token,
      });
      expect(users.status).to.equal(200);
      expect(users.body.data.map((u) => u.id)).to.deep.equal([userId]);
      const messages = await api().get<Array<{ message: string }>>(`/adminApi/accounts/${t.account.id}/users/${userId}/messages`, {
        token: reader.token,
      });
      expect(messages.body.data.map((m) => m.message)).to.deep.equal(['visible to operators']);
      const elsewhere = await api().get(`/adminApi/accounts/${t.account.id + 100000}/users`, { token: reader.token });
      expect(elsewhere.status).to.equal(403);
      const notHere = await api().get(`/adminApi/accounts/${t.account.id}/users/2147483000/messages`, { token: reader.token });
      expect(notHere.status).to.equal(404);
    });

    it('manages operators and their grants (operators:manage), refusing bad grants', async () => {
      const managed = await operatorToken([{ accountId: t.account.id, permission: 'accounts:read' }]);
      const token = await adminToken();
      const list = await api().get<Array<{ id: number; grants: unknown[] }>>('/adminApi/operators', { token });
      expect(list.body.data.find((o) => o.id === managed.id)?.grants).to.deep.equal([
        { accountId: t.account.id, permission: 'accounts:read' },
      ]);

      const replaced = await api().put<{ grants: unknown[] }>(`/adminApi/operators/${managed.id}/grants`, {
        token,
        json: { grants: [{ accountId: t.account.id, permission: 'services:edit' }] },
      });
      expect(replaced.body.data.grants).to.deep.equal([{ accountId: t.account.id, permission: 'services:edit' }]);
      const nowDenied = await api().get(`/adminApi/accounts/${t.account.id}`, { token: managed.token });
      expect(nowDenied.status, 'grants change at once').to.equal(403);

      expect((await api().get('/adminApi/operators', { token: managed.token })).status).to.equal(403);
      const badPermission = await api().put(`/adminApi/operators/${managed.id}/grants`, {
        token,
        json: { grants: [{ accountId: null, permission: 'world:domination' }] },
      });
      expect(badPermission.status).to.equal(422);
      const unknownAccount = await api().put(`/adminApi/operators/${managed.id}/grants`, {
        token,
        json: { grants: [{ accountId: 2147483000, permission: 'accounts:read' }] },
      });
      expect(unknownAccount.status).to.equal(422);
      expect(unknownAccount.body.notifications[0]?.message).to.equal('invalid_reference');
      const unchanged = await api().get<Array<{ id: number; grants: unknown[] }>>('/adminApi/operators', { token });
      expect(unchanged.body.data.find((o) => o.id === managed.id)?.grants, 'a refused change changes nothing').to.have.length(1);
      const duplicate = await api().post('/adminApi/operators', {
        token,
        json: { email: sharedServer().config.admin.email, password: 'whatever password', grants: [] },
      });
      expect(duplicate.status).to.equal(409);
    });
  });
});
