// What browsers load besides the APIs: the widget's script at its three addresses, with caching,
// integrity and CORS as docs/widget.md promises, and the demo page of a first start.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import { WEB_DIST } from '../src/http/web-assets.ts';
import { client, type Client } from './support/http.ts';
import type { CreatedServiceData } from './support/factories.ts';
import { sharedServer, startTestServer, TEST_ADMIN, type TestServer } from './support/server.ts';

const built = () => readFileSync(path.join(WEB_DIST, 'widget.js'));

describe('web: the widget script and the demo page', () => {
  it('serves /widget.js as a script any site may load, briefly cached and revalidated by ETag', async () => {
    const api = client(sharedServer().url);
    const answer = await api.get('/widget.js');
    expect(answer.status).to.equal(200);
    expect(answer.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect(answer.headers.get('cache-control')).to.equal('public, max-age=300, stale-while-revalidate=86400');
    expect(answer.headers.get('access-control-allow-origin')).to.equal('*');
    expect(answer.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(Buffer.from(answer.text)).to.deep.equal(built());
    const etag = answer.headers.get('etag');
    expect(etag).to.match(/^"[0-9a-f]{12}"$/);
    // node:http, not fetch: fetch adds `Cache-Control: no-cache` to a conditional request.
    const again = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      get(`${sharedServer().url}/widget.js`, { headers: { 'if-none-match': etag ?? '' } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      }).on('error', reject);
    });
    expect(again).to.deep.equal({ status: 304, body: '' });
  });

  it('names the newest build in /widget.json and serves it for good at its hash; another hash is 404', async () => {
    const api = client(sharedServer().url);
    const about = await api.get<{ path: string; integrity: string; bytes: number }>('/widget.json');
    expect(about.status).to.equal(200);
    const body = built();
    expect(about.body.data.integrity).to.equal(`sha384-${createHash('sha384').update(body).digest('base64')}`);
    expect(about.body.data.bytes).to.equal(body.length);
    expect(about.body.data.path).to.match(/^\/widget\/[0-9a-f]{12}\.js$/);

    const exact = await api.get(about.body.data.path);
    expect(exact.status).to.equal(200);
    expect(exact.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect(Buffer.from(exact.text)).to.deep.equal(body);

    const other = await api.get('/widget/000000000000.js');
    expect(other.status).to.equal(404);
    expect(other.body.notifications[0]?.message).to.equal('widget_build_not_found');
    const malformed = await api.get('/widget/latest.js');
    expect(malformed.status).to.equal(422);
  });

  it('keeps the widget within its size budget: 45 KB gzipped, Socket.IO client included', async () => {
    const { gzipSync } = await import('node:zlib');
    expect(gzipSync(built(), { level: 9 }).length).to.be.below(45 * 1024);
  });

  it('answers / with 404 unless demoPage is enabled', async () => {
    const answer = await client(sharedServer().url).get('/');
    expect(answer.status).to.equal(404);
    expect(answer.body.notifications[0]?.message).to.equal('route_not_found');
  });

  describe('with demoPage enabled', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ demoPage: { enabled: true } });
    });
    after(() => server.stop());

    it('explains there is no account yet, then shows the widget on the oldest account under a strict CSP', async () => {
      const api = client(server.url);
      const empty = await api.get('/');
      expect(empty.status).to.equal(200);
      expect(empty.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(empty.text).to.contain('There is no account yet');

      const login = await api.post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN });
      const account = (name: string, c: Client) =>
        c.post<{ identification: string }>('/adminApi/accounts', { token: login.body.data.token, json: { name } }).then((a) => a.body.data);
      const first = await account('First shop', api);
      await account('Second shop', api);
      const page = await api.get('/');
      expect(page.text).to.contain(`<script src="/widget.js" data-account="${first.identification}"`);
      expect(page.text).to.contain('npm run demo-bot');
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).to.contain("script-src 'self'");
      expect(csp).to.contain("connect-src 'self'");
      expect(csp).not.to.contain('unsafe-inline');
    });

    it('shows a Service API call that works as written, once the key and user id are filled in', async () => {
      const api = client(server.url);
      const { token } = (await api.post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN })).body.data;
      // Any account will do: the page shows the oldest one.
      await api.post('/adminApi/accounts', { token, json: { name: 'Demo page shop' } });
      const page = await api.get('/');
      const shown = /data-account="(\w+)"/.exec(page.text)?.[1];
      const accounts = await api.get<Array<{ id: number; identification: string }>>('/adminApi/accounts', { token });
      const shop = accounts.body.data.find((a) => a.identification === shown);
      expect(shop, page.text).to.not.equal(undefined);
      const service = await api.post<CreatedServiceData>(`/adminApi/accounts/${shop!.id}/services`, {
        token,
        json: { name: 'Demo page check', webhookUrl: null },
      });
      const widget = await api.post<{ userId: number }>('/clientApi/v1.9/devices', {
        headers: { 'x-iris-identification': `${shop!.identification}:demo-page-device` },
        json: {},
      });
      const curl = /<pre>curl -X POST (\S+) \\\n\s+-H "([^"]+)" -H '([^']+)' \\\n\s+-d '([^']+)'<\/pre>/.exec(page.text);
      expect(curl, page.text).to.not.equal(null);
      const [, url, keyHeader, typeHeader, body] = curl as RegExpExecArray;
      const fill = (text: string) =>
        text
          .replaceAll('&lt;API key&gt;', service.body.data.apiKey)
          .replaceAll('&lt;userId&gt;', String(widget.body.data.userId))
          .replaceAll('&quot;', '"');
      const header = (line: string) => {
        const [name, ...value] = fill(line).split(':');
        return [name!.trim(), value.join(':').trim()] as const;
      };
      const sent = await fetch(fill(url!), {
        method: 'POST',
        headers: Object.fromEntries([header(keyHeader!), header(typeHeader!)]),
        body: fill(body!),
      });
      expect(sent.status, await sent.clone().text()).to.equal(201);
    });
  });
});
