// Answers by email across nodes: a customer connected to one node keeps the email of another
// node's worker waiting (the worker asks the other nodes through Redis), and the email goes once
// they disconnect. Two real server processes on one PostgreSQL, a Redis of the test's own, and a
// real SMTP server on loopback.
import { expect } from 'chai';
import { createTestDatabase, mode, type TestDatabase } from './support/database.ts';
import type { AccountData } from './support/factories.ts';
import { client } from './support/http.ts';
import { nodeEnv, startProcess, type ServerProcess } from './support/process.ts';
import { freePort, TestRedis } from './support/redis.ts';
import { SmtpStandIn } from './support/smtp.ts';
import { WidgetSocket } from './support/sockets.ts';
import { Widget } from './support/widget.ts';

const ADMIN = { email: 'email-nodes@palaver.test', password: 'two nodes password' };
const runs = mode === 'postgresql';

(runs ? describe : describe.skip)(
  `answers by email on two nodes${runs ? '' : ' (skipped: needs TEST_DATABASE_URL and redis-server)'}`,
  function () {
    this.timeout(120_000);
    let database: TestDatabase;
    let redis: TestRedis;
    let smtp: SmtpStandIn;
    let nodes: ServerProcess[];

    before(async () => {
      database = await createTestDatabase('email_nodes');
      redis = new TestRedis(await freePort());
      await redis.start();
      smtp = await SmtpStandIn.start();
      const env = {
        ...nodeEnv(database, redis.url, ADMIN),
        PALAVER_SMTP_HOST: '127.0.0.1',
        PALAVER_SMTP_PORT: String(smtp.port),
        PALAVER_SMTP_FROM: 'support@palaver.test',
        PALAVER_PUBLIC_URL: 'https://chat.palaver.test',
        PALAVER_EMAIL_LINK_SECRET: 'a test secret that is long enough to sign links',
        PALAVER_EMAIL_UNSEEN_AFTER_SECONDS: '1',
      };
      // Node 0 sends; node 1 only serves (no worker), so the socket is never on the sending node.
      nodes = [await startProcess(env), await startProcess({ ...env, PALAVER_DELIVERY_WORKER: 'false' })];
    });

    after(async () => {
      await Promise.all((nodes ?? []).map((n) => n.stop('SIGTERM')));
      await smtp?.stop();
      await redis?.stop();
      await database?.drop();
    });

    it("waits while the customer's socket is on another node, and sends once it is gone", async () => {
      const [sender, other] = nodes as [ServerProcess, ServerProcess];
      const api = client(sender.url);
      const token = (await api.post<{ token: string }>('/adminApi/login', { json: ADMIN })).body.data.token;
      const account = (
        await api.post<AccountData>('/adminApi/accounts', {
          token,
          json: { name: 'Nodes' },
        })
      ).body.data;
      const service = (
        await api.post<{ apiKey: string }>(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 'Desk', webhookUrl: null } })
      ).body.data;
      const widget = new Widget(account, undefined, undefined, '', other.url);
      const userId = (await widget.register({ type: 3 })).body.data.userId;
      expect((await widget.call('PUT', '/users/me/contact', { json: { email: 'nodes@example.com' } })).status).to.equal(200);
      const socket = new WidgetSocket(widget, { baseUrl: other.url });
      await socket.connected();

      const sent = await api.post(`/users/${userId}/messages`, {
        token: service.apiKey,
        json: { message: 'Hi', agent: { id: 1, name: 'Ada' } },
      });
      expect(sent.status, sent.text).to.equal(201);
      const rows = async () =>
        (
          await api.get<Array<{ state: string; lastStatus: number | null; lastError: string | null }>>(
            `/adminApi/accounts/${account.id}/email-deliveries`,
            { token },
          )
        ).body.data;
      const until = async (done: (r: Awaited<ReturnType<typeof rows>>) => boolean) => {
        const deadline = Date.now() + 30_000;
        for (;;) {
          const r = await rows();
          if (done(r)) return r;
          if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(r)}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      };
      await until((r) => r[0]?.lastError === 'not sent yet: the customer is connected');
      expect(smtp.to('nodes@example.com')).to.have.length(0);

      socket.close();
      const done = await until((r) => r[0]?.state === 'delivered');
      expect(done.map((r) => [r.state, r.lastStatus])).to.deep.equal([['delivered', 250]]);
      expect(smtp.to('nodes@example.com')).to.have.length(1);
    });
  },
);
