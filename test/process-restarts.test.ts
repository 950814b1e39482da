// Palaver restarted as an operator restarts it: `src/main.ts` in its own process, stopped and
// started again on the same data, with what must survive a restart and what a first start shows.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { io } from 'socket.io-client';
import { mode } from './support/database.ts';
import { client } from './support/http.ts';
import { processFixture, type ServerProcess } from './support/process.ts';
import { freePort } from './support/redis.ts';

describe('the server process across restarts', function () {
  // Several processes per test, each a second or two of CPU.
  this.timeout(300_000);
  const proc = processFixture('proc');

  it(`starts with no setup (${mode}), keeps its data across a restart and exits cleanly on SIGTERM`, async () => {
    // Nothing at all, not even the tables: the first start creates and migrates the database.
    await proc.emptyDatabase();
    let running = await proc.start({ PALAVER_DEMO: 'true' });
    const api = client(running.url);
    expect((await api.get('/healthz')).status).to.equal(200);
    expect((await api.get('/readyz')).status).to.equal(200);

    // First start on an empty database: a demo operator, account and Service, printed once.
    const [, email, password, accountId] = await demoBanner(running);
    const login = await api.post<{ token: string }>('/adminApi/login', { json: { email, password } });
    expect(login.status).to.equal(200);
    const created = await api.post<{ id: number }>('/adminApi/accounts', {
      token: login.body.data.token,
      json: { name: 'Survives restarts' },
    });
    expect(created.status).to.equal(201);

    const first = await running.stop('SIGTERM');
    expect(first.code).to.equal(0);
    expect(running.output()).to.contain('palaver stopped');

    running = await proc.start({ PALAVER_DEMO: 'true' });
    expect(running.output(), 'the demo is made only once').to.not.contain('demo account');
    const again = client(running.url);
    const relogin = await again.post<{ token: string }>('/adminApi/login', { json: { email, password } });
    expect(relogin.status).to.equal(200);
    const token = relogin.body.data.token;
    expect((await again.get(`/adminApi/accounts/${accountId}`, { token })).status).to.equal(200);
    const kept = await again.get<{ name: string }>(`/adminApi/accounts/${created.body.data.id}`, { token });
    expect(kept.body.data.name).to.equal('Survives restarts');

    const second = await running.stop('SIGTERM');
    expect(second.code).to.equal(0);
  });

  it('lets open chat sockets reconnect by themselves across a graceful restart, and catch up', async () => {
    const port = await freePort();
    let running = await proc.start({ PALAVER_DEMO: 'true', PORT: String(port) });
    const identification = (await demoBanner(running))[4];
    const { apiKey } = JSON.parse(readFileSync(path.join(proc.database.dataDir, 'demo-bot.json'), 'utf8')) as { apiKey: string };
    const api = client(running.url);
    const headers = { 'x-iris-identification': `${identification}:process-restart-device` };
    const registered = await api.post<{ userId: number }>('/clientApi/v1.9/devices', { headers, json: {} });
    expect(registered.status, registered.text).to.equal(200);

    // As the widget and the Parley clients connect: reconnection on, the last message id sent each time.
    let lastMessageId = 0;
    const socket = io(running.url, {
      transports: ['websocket'],
      reconnectionDelay: 100,
      reconnectionDelayMax: 500,
      auth: (cb) => cb({ identification: headers['x-iris-identification'], lastMessageId }),
    });
    const texts: string[] = [];
    socket.on('message', (message: { id: number; message: string }) => {
      lastMessageId = message.id;
      texts.push(message.message);
    });
    const disconnected = new Promise<string>((resolve) => socket.once('disconnect', resolve));
    try {
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      const stopped = await running.stop('SIGTERM');
      expect(stopped.code).to.equal(0);
      expect(await disconnected, 'a reason the client reconnects on (not "io server disconnect")').to.equal('transport close');

      // Listened for before the start: the socket may reconnect before the start is announced.
      const reconnected = new Promise((resolve) => socket.io.once('reconnect', resolve));
      running = await proc.start({ PALAVER_DEMO: 'true', PORT: String(port) });
      const sent = await client(running.url).post(`/users/${registered.body.data.userId}/messages`, {
        token: apiKey,
        json: { message: 'answered while the widget was away', agent: { id: 1, name: 'Ada' } },
      });
      expect(sent.status, sent.text).to.equal(201);
      await reconnected;
      for (let i = 0; i < 100 && texts.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(texts).to.deep.equal(['answered while the widget was away']);
    } finally {
      socket.close();
    }
  });

  it('writes nothing when its port is taken (EADDRINUSE, said in one line); the next start shows the demo login, which works', async () => {
    const port = await freePort();
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '0.0.0.0', resolve));
    let failed;
    try {
      failed = await proc.run('src/main.ts', [], { PALAVER_DEMO: 'true', PORT: String(port), LOG_LEVEL: 'info' });
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
    expect(failed.code).to.equal(1);
    const said = failed.stdout + failed.stderr;
    expect(said).to.contain(`Port ${port} (127.0.0.1) is in use by another program (EADDRINUSE)`);
    expect(said, 'no banner of a demo it could not serve').to.not.contain('demo account');
    expect(said, 'one line, no stack').to.not.contain('    at ');

    const running = await proc.start({ PALAVER_DEMO: 'true', PORT: String(port) });
    const [, email, password] = await demoBanner(running);
    const login = await client(running.url).post<{ token: string }>('/adminApi/login', { json: { email, password } });
    expect(login.status, login.text).to.equal(200);
  });

  it('shows the demo login at every start until its operator signs in, kept meanwhile in a file only its owner reads', async () => {
    let running = await proc.start({ PALAVER_DEMO: 'true' });
    const [, email, password] = await demoBanner(running);
    const kept = path.join(proc.database.dataDir, 'demo-login.json');
    expect(statSync(kept).mode & 0o777, 'owner only').to.equal(0o600);
    // The terminal was closed before the password was copied: the next start shows it again.
    const stopped = await running.stop('SIGTERM');
    expect(stopped, running.output()).to.include({ code: 0, signal: null });
    running = await proc.start({ PALAVER_DEMO: 'true' });
    const [, againEmail, againPassword] = await demoBanner(running);
    expect([againEmail, againPassword]).to.deep.equal([email, password]);
    expect(running.output()).to.contain(`until you sign in as ${email}`);
    const login = await client(running.url).post('/adminApi/login', { json: { email, password } });
    expect(login.status, login.text).to.equal(200);
    expect(existsSync(kept), 'forgotten once used').to.equal(false);
    expect((await running.stop('SIGTERM')).code).to.equal(0);
    running = await proc.start({ PALAVER_DEMO: 'true' });
    expect(running.output(), 'not shown after a sign-in').to.not.contain('demo account');
  });
});

/** The first start's demo banner: operator email and password, account id and identification. */
async function demoBanner(running: ServerProcess): Promise<RegExpExecArray> {
  const banner = /operator (\S+) \/ (\S+)\n\s+Account\s+id (\d+), identification (\w+)/;
  // Printed after the "listening" line that startProcess waits for, so perhaps in a later chunk.
  for (let i = 0; i < 600 && !banner.test(running.output()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  const found = banner.exec(running.output());
  expect(found, running.output()).to.not.equal(null);
  return found as RegExpExecArray;
}
