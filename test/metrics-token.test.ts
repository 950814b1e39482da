// /metrics behind a bearer token when metrics.token is set; without one, open only where
// metrics.open says so (development and test: test/http.test.ts), 404 in production.
import { expect } from 'chai';
import { loadConfig } from '../src/config.ts';
import { client } from './support/http.ts';
import { startTestServer, type TestServer } from './support/server.ts';

describe('/metrics with metrics.token', function () {
  this.timeout(60_000);
  let server: TestServer;
  const token = 'scraper-token-of-test-0123456789';

  before(async () => {
    server = await startTestServer({ metrics: { token } });
  });
  after(() => server.stop());

  it('answers 401 without the token or with another, and the metrics with it', async () => {
    const api = client(server.url);
    const missing = await api.get('/metrics');
    expect(missing.status).to.equal(401);
    expect(missing.body.notifications[0]?.message).to.equal('missing_token');
    expect(missing.headers.get('www-authenticate')).to.equal('Bearer');
    expect(missing.text).not.to.contain('palaver_');
    const wrong = await api.get('/metrics', { token: 'scraper-token-of-test-0123456780' });
    expect(wrong.status).to.equal(401);
    expect(wrong.body.notifications[0]?.message).to.equal('invalid_token');
    const right = await api.get('/metrics', { token });
    expect(right.status).to.equal(200);
    expect(right.text).to.contain('palaver_process_resident_memory_bytes');
    expect((await api.get('/healthz')).status, 'health stays open').to.equal(200);
  });
});

describe('/metrics without metrics.token', function () {
  this.timeout(60_000);

  it('is closed in production and open in development, unless metrics.open says otherwise', () => {
    expect(loadConfig({ env: { NODE_ENV: 'production' } }).metrics).to.deep.equal({ open: false });
    expect(loadConfig({ env: { NODE_ENV: 'development' } }).metrics).to.deep.equal({ open: true });
    expect(loadConfig({ env: { NODE_ENV: 'production', PALAVER_METRICS_OPEN: 'true' } }).metrics.open).to.equal(true);
  });

  it("answers 404 as for an unknown route when closed (production's default)", async () => {
    const server = await startTestServer({ metrics: { open: false }, logLevel: 'error' });
    try {
      const answer = await client(server.url).get('/metrics');
      expect(answer.status).to.equal(404);
      expect(answer.body.notifications[0]?.message).to.equal('route_not_found');
      expect(answer.text).not.to.contain('palaver_');
    } finally {
      await server.stop();
    }
  });
});
