// /metrics behind a bearer token when metrics.token is set (open when unset: test/http.test.ts).
import { expect } from 'chai';
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
