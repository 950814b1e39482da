// The answers every route shares: the envelope, health, metrics and the handling of bad requests.
import net from 'node:net';
import { expect } from 'chai';
import { mode } from './support/database.ts';
import { client } from './support/http.ts';
import { sharedServer } from './support/server.ts';

describe('HTTP basics', () => {
  const api = () => client(sharedServer().url);

  it('answers /healthz and /readyz with 200 in the envelope', async () => {
    const health = await api().get('/healthz');
    expect(health.status).to.equal(200);
    expect(health.body).to.include({ status: 'SUCCESS' });
    expect(health.body.notifications).to.deep.equal([]);
    expect(health.body.metadata).to.deep.include({ values: { url: 'healthz' }, method: 'get' });
    expect(health.body.metadata.duration).to.be.a('number');

    const ready = await api().get<{ checks: Record<string, string> }>('/readyz');
    expect(ready.status).to.equal(200);
    expect(ready.body.data.checks.database).to.equal('ok');
    if (process.env.TEST_REDIS_URL) expect(ready.body.data.checks.redis).to.equal('ok');
  });

  it('keeps an idle connection open as long as http.keepAliveTimeoutMs says, and tells the client', async () => {
    const health = await api().get('/healthz');
    expect(health.headers.get('connection')).to.equal('keep-alive');
    expect(health.headers.get('keep-alive')).to.equal(`timeout=${sharedServer().config.http.keepAliveTimeoutMs / 1000}`);
  });

  it('serves Prometheus metrics, including per-route request durations', async () => {
    await api().get('/healthz');
    const metrics = await api().get('/metrics');
    expect(metrics.status).to.equal(200);
    expect(metrics.headers.get('content-type')).to.contain('text/plain');
    expect(metrics.text).to.match(/palaver_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\}/);
    expect(metrics.text).to.contain('palaver_process_resident_memory_bytes');
  });

  it('counts the event loop’s busy time, rising as the node works', async () => {
    const busy = async () => Number(/^palaver_event_loop_busy_seconds_total (\S+)$/m.exec((await api().get('/metrics')).text)?.[1]);
    const before = await busy();
    expect(before).to.be.greaterThan(0);
    // Work on the node's own thread between two reads: the counter has to show it.
    for (let i = 0; i < 20; i += 1) await api().get('/healthz');
    expect(await busy()).to.be.greaterThan(before);
  });

  it('counts the embedded database’s busy time, rising as it runs statements; no such counter on PostgreSQL', async () => {
    const busy = async () => /^palaver_embedded_database_busy_seconds_total (\S+)$/m.exec((await api().get('/metrics')).text)?.[1];
    if (mode === 'postgresql') {
      expect(await busy()).to.equal(undefined);
      return;
    }
    const before = Number(await busy());
    // The server's start ran statements on it before the first scrape.
    expect(before).to.be.greaterThan(0);
    // A statement that keeps PGlite's thread busy for 50 ms at least, between two reads.
    await sharedServer().deps.db.orm.em.fork().getConnection().execute('select pg_sleep(0.05)');
    expect(Number(await busy())).to.be.at.least(before + 0.05);
  });

  it('reports the embedded database thread’s own heap, used and committed; no such gauge on PostgreSQL', async () => {
    const text = (await api().get('/metrics')).text;
    const heap = (state: string) => new RegExp(`^palaver_embedded_database_heap_bytes\\{state="${state}"\\} (\\S+)$`, 'm').exec(text)?.[1];
    if (mode === 'postgresql') {
      expect(heap('used')).to.equal(undefined);
      return;
    }
    // PGlite's JavaScript lives on that thread: megabytes, not the main thread's figure.
    const [used, committed] = [Number(heap('used')), Number(heap('committed'))];
    expect(used).to.be.greaterThan(1_000_000);
    expect(committed).to.be.at.least(used);
    const main = Number(/^palaver_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1]);
    expect(used).to.not.equal(main);
  });

  it('echoes a sane x-request-id and makes one up otherwise', async () => {
    const mine = await api().get('/healthz', { headers: { 'x-request-id': 'abc-123' } });
    expect(mine.headers.get('x-request-id')).to.equal('abc-123');
    const made = await api().get('/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(made.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });

  it('answers headers over the parser limit with 431 headers_too_large in the envelope, not a bare status line', async () => {
    // fetch refuses to send such headers itself, so the request goes out as raw bytes.
    const { hostname, port } = new URL(sharedServer().url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => {
        socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\nx-filler: ${'x'.repeat(20_000)}\r\n\r\n`);
      });
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
    expect(raw).to.match(/^HTTP\/1\.1 431 /);
    const envelope = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { status: string; notifications: Array<{ message: string }> };
    expect(envelope.status).to.equal('ERROR');
    expect(envelope.notifications[0]?.message).to.equal('headers_too_large');
  });

  it('answers an unknown route with 404 route_not_found', async () => {
    for (const path of ['/nope', '/adminApi/nope', '/adminApi']) {
      const answer = await api().get(path);
      expect(answer.status, path).to.equal(404);
      expect(answer.body.status).to.equal('ERROR');
      expect(answer.body.notifications).to.deep.equal([{ type: 'error', message: 'route_not_found' }]);
    }
  });

  it('answers a wrong method with 405 and the allowed ones', async () => {
    const answer = await api().delete('/healthz');
    expect(answer.status).to.equal(405);
    expect(answer.headers.get('allow')).to.contain('GET');
    expect(answer.body.notifications[0]?.message).to.equal('method_not_allowed');

    const secondStep = await api().get('/adminApi/login/two-factor');
    expect(secondStep.status).to.equal(405);
    expect(secondStep.headers.get('allow')).to.equal('POST');
  });

  it("routes a path to its API prefix's routes whatever the prefix's case, as the routers match", async () => {
    const answer = await api().get('/ADMINAPI/login/two-factor');
    expect(answer.status).to.equal(405);
    expect(answer.headers.get('allow')).to.equal('POST');
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const answer = await api().post('/adminApi/login', {
      raw: '{"email": "a@b.c", ',
      headers: { 'content-type': 'application/json' },
    });
    expect(answer.status).to.equal(400);
    expect(answer.body.notifications).to.deep.equal([{ type: 'error', message: 'invalid_json' }]);
    expect(answer.body.metadata.values.url).to.equal('adminApi/login');
  });

  it('answers an oversized body with 413 payload_too_large', async () => {
    const answer = await api().post('/adminApi/login', {
      json: { email: 'a@b.cd', password: 'x'.repeat(300 * 1024) },
    });
    expect(answer.status).to.equal(413);
    expect(answer.body.notifications[0]?.message).to.equal('payload_too_large');
  });

  it('answers a body that is not JSON with 415', async () => {
    const answer = await api().post('/adminApi/login', {
      raw: 'email=a@b.cd',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(answer.status).to.equal(415);
    expect(answer.body.notifications[0]?.message).to.equal('unsupported_media_type');
  });
});
