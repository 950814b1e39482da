// What a browser needs of the Client API, asserted over plain HTTP (the browser suite in
// test/browser/ drives a real Chromium through the same): CORS preflights and headers on
// every answer, errors included; JSON sent as text/plain; an account's allowed origins;
// page addresses kept as sent, however long.
import { expect } from 'chai';
import { MessageSchema } from '../src/db/entities/index.ts';
import { adminToken } from './support/factories.ts';
import { client } from './support/http.ts';
import { sharedServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

const SITE = 'https://shop.example';

async function preflight(path: string, origin = SITE, requestHeaders = 'authorization,x-iris-identification') {
  return fetch(`${sharedServer().url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders },
  });
}

async function setAllowedOrigins(accountId: number, allowedOrigins: string[]) {
  return client(sharedServer().url).patch<{ allowedOrigins: string[] }>(`/adminApi/accounts/${accountId}`, {
    token: await adminToken(),
    json: { allowedOrigins },
  });
}

describe('Client API from browsers', function () {
  this.timeout(30_000);
  let t: Tenant;

  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(() => t.receiver.close());

  describe('CORS', () => {
    for (const path of [
      '/clientApi/v1.9/devices',
      '/clientApi/v1.6/messages',
      '/messages',
      '/media',
      '/clientApi/v1.8/services/event/startTyping',
      '/clientApi/v1.9/media/2026/11/22/x.png',
    ]) {
      it(`answers the preflight of ${path} with 204, the origin, the asked headers and a max-age`, async () => {
        const answer = await preflight(path, SITE, 'authorization,x-iris-identification,content-type,x-custom-site');
        expect(answer.status).to.equal(204);
        expect(answer.headers.get('access-control-allow-origin')).to.equal(SITE);
        expect(answer.headers.get('access-control-allow-methods')).to.include('POST').and.include('PUT').and.include('GET');
        expect(answer.headers.get('access-control-allow-headers')).to.equal(
          'authorization,x-iris-identification,content-type,x-custom-site',
        );
        expect(answer.headers.get('access-control-max-age')).to.equal('600');
        expect(answer.headers.get('vary')).to.include('Origin');
        expect(answer.headers.get('access-control-allow-credentials'), 'never credentials').to.equal(null);
      });
    }

    it('puts the CORS headers on successes and on errors alike', async () => {
      const widget = new Widget(t.account, undefined, undefined, '/clientApi/v1.9');
      const ok = await widget.call('POST', '/devices', { json: {}, headers: { origin: SITE } });
      expect(ok.status).to.equal(200);
      expect(ok.headers.get('access-control-allow-origin')).to.equal(SITE);

      const anonymous = await client(sharedServer().url).post('/clientApi/v1.9/devices', { json: {}, headers: { origin: SITE } });
      expect(anonymous.status).to.equal(400);
      expect(anonymous.body.notifications[0]?.message).to.equal('identification_required');
      expect(anonymous.headers.get('access-control-allow-origin')).to.equal(SITE);

      const invalid = await widget.call('POST', '/messages', {
        raw: '{"message":',
        headers: { origin: SITE, 'content-type': 'text/plain;charset=UTF-8' },
      });
      expect(invalid.status).to.equal(400);
      expect(invalid.headers.get('access-control-allow-origin')).to.equal(SITE);
      expect(invalid.headers.get('access-control-expose-headers')).to.include('retry-after').and.include('x-request-id');
    });

    it('leaves the Service and Admin APIs without CORS', async () => {
      for (const path of ['/users/1/messages', '/serviceApi/v2.3/users/1', '/adminApi/login']) {
        const answer = await preflight(path);
        expect(answer.status, path).to.equal(405);
        expect(answer.headers.get('access-control-allow-origin'), path).to.equal(null);
      }
      const login = await client(sharedServer().url).post('/adminApi/login', {
        json: { email: 'x@y.z', password: 'nope' },
        headers: { origin: SITE },
      });
      expect(login.headers.get('access-control-allow-origin')).to.equal(null);
    });

    it('refuses a page of an origin its account does not allow: 403 the page can read, nothing written', async () => {
      const widget = new Widget(t.account);
      expect((await widget.register()).status).to.equal(200);
      const set = await setAllowedOrigins(t.account.id, ['https://Only.Example', 'http://localhost:8080']);
      expect(set.status, set.text).to.equal(200);
      expect(set.body.data.allowedOrigins).to.deep.equal(['https://only.example', 'http://localhost:8080']);

      const refused = await widget.call('POST', '/messages', { json: { message: 'from a stranger site' }, headers: { origin: SITE } });
      expect(refused.status).to.equal(403);
      expect(refused.body.notifications[0]?.message).to.equal('origin_not_allowed');
      // Readable, so the widget can say why it cannot chat (docs/client-api.md).
      expect(refused.headers.get('access-control-allow-origin')).to.equal(SITE);
      expect(refused.headers.get('vary')).to.match(/origin/i);
      const userId = (await widget.register()).body.data.userId;
      expect(await sharedServer().deps.db.orm.em.fork().count(MessageSchema, { userId })).to.equal(0);

      const allowed = await widget.call('POST', '/messages', {
        json: { message: 'from the shop' },
        headers: { origin: 'https://only.example' },
      });
      expect(allowed.status).to.equal(200);
      expect(allowed.headers.get('access-control-allow-origin')).to.equal('https://only.example');
      // Apps send no Origin: the list is for browsers only.
      expect((await widget.send('from the app')).status).to.equal(200);

      expect((await setAllowedOrigins(t.account.id, [])).body.data.allowedOrigins).to.deep.equal([]);
      const anyOrigin = await widget.call('POST', '/messages', { json: { message: 'any site again' }, headers: { origin: SITE } });
      expect(anyOrigin.status).to.equal(200);
    });

    it('validates allowed origins in the Admin API', async () => {
      const answer = await setAllowedOrigins(t.account.id, ['https://shop.example/path', 'ftp://x.example', '*']);
      expect(answer.status).to.equal(422);
      expect(answer.body.notifications.map((n) => n.field)).to.deep.equal([
        'body.allowedOrigins.0',
        'body.allowedOrigins.1',
        'body.allowedOrigins.2',
      ]);
    });
  });

  describe('JSON sent as text/plain', () => {
    it('reads it on every Client API call, whatever its charset parameter (JSON is UTF-8)', async () => {
      const widget = new Widget(t.account, undefined, undefined, '/clientApi/v1.9');
      const plain = { 'content-type': 'text/plain;charset=UTF-8' };
      const registered = await widget.call<{ userId: number }>('POST', '/devices', {
        raw: JSON.stringify({ type: 3, version: '1.9.0' }),
        headers: plain,
      });
      expect(registered.status, registered.text).to.equal(200);
      const sent = await widget.call<{ messageId: string }>('POST', '/messages', {
        raw: JSON.stringify({ message: 'héllo' }),
        headers: plain,
      });
      expect(sent.status, sent.text).to.equal(200);
      // Android's spelling of the header.
      const android = await widget.call('POST', '/messages', {
        raw: JSON.stringify({ message: 'café' }),
        headers: { 'content-type': 'text/plain; charset=UTF-8' },
      });
      expect(android.status, android.text).to.equal(200);
      const [request] = await t.receiver.waitFor(1);
      expect((request?.json as { message: string }).message).to.equal('héllo');

      const status = await widget.call('PUT', '/messages/status/3', {
        raw: JSON.stringify({ messageIds: [Number(sent.body.data.messageId)] }),
        headers: { 'content-type': 'text/plain' },
      });
      expect(status.status, status.text).to.equal(200);
      const shown = await widget.messages();
      expect(shown.body.data.map((m) => m.message)).to.deep.equal(['café', 'héllo']);
    });

    it('still answers malformed JSON with 400 invalid_json and other types with 415', async () => {
      const widget = new Widget(t.account);
      await widget.register();
      const malformed = await widget.call('POST', '/messages', { raw: 'hello there', headers: { 'content-type': 'text/plain' } });
      expect(malformed.status).to.equal(400);
      expect(malformed.body.notifications[0]?.message).to.equal('invalid_json');
      const html = await widget.call('POST', '/messages', { raw: '{"message":"x"}', headers: { 'content-type': 'text/html' } });
      expect(html.status).to.equal(415);
      expect(html.body.notifications[0]?.message).to.equal('unsupported_media_type');
    });

    it('is a Client API leniency only: the Admin API keeps its 415', async () => {
      const answer = await client(sharedServer().url).post('/adminApi/accounts', {
        raw: JSON.stringify({ name: 'x' }),
        headers: { 'content-type': 'text/plain', authorization: `Bearer ${await adminToken()}` },
      });
      expect(answer.status).to.equal(415);
    });
  });

  describe('page addresses', () => {
    it('keeps a long referer (or referrer) as sent and never refuses a call for it', async () => {
      const widget = new Widget(t.account, undefined, undefined, '/clientApi/v1.9');
      const long = `https://shop.example/p/1?${'utm_source=newsletter&'.repeat(100)}x=1`;
      expect(long.length).to.be.greaterThan(2191);
      expect((await widget.register({ referer: long })).status).to.equal(200);
      expect((await widget.send({ message: 'long', referer: long })).status).to.equal(200);
      expect((await widget.send({ message: 'spelled the other way', referrer: 'app://home screen' })).status).to.equal(200);
      expect((await widget.send({ message: 'not a url', referer: 'not a url at all' })).status).to.equal(200);
      expect((await widget.send({ message: 'too long', referer: 'x'.repeat(9000) })).status).to.equal(200);
      expect((await widget.send({ message: 'not text', referer: 42 })).status).to.equal(200);
      const requests = await t.receiver.waitFor(5);
      const urls = requests.map((r) => (r.json as { requestUrl?: string }).requestUrl);
      expect(urls).to.deep.equal([long, 'app://home screen', 'not a url at all', undefined, undefined]);
    });
  });
});
