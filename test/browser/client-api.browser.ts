// Issue 11: a real browser on another origin uses the Client API exactly as the Parley web
// widget does. Each call below is cross-origin with non-safelisted headers, so Chromium
// preflights it; a call that resolves at all proves the preflight and the answer's CORS headers
// were right. What the server does with the calls is checked from Node (Service receiver,
// Service API, database), what the page can see is checked from the page.
import { expect } from 'chai';
import { DeviceSchema } from '../../src/db/entities/index.ts';
import { useBrowser } from '../support/browser.ts';
import { adminToken } from '../support/factories.ts';
import { ChatPage, startHostPage, type HostPage, type ListedMessage } from '../support/host-page.ts';
import { client } from '../support/http.ts';
import type { Receiver } from '../support/receiver.ts';
import { sharedServer } from '../support/server.ts';
import { tenant, type Tenant } from '../support/tenant.ts';
import { authFor, newDeviceId } from '../support/widget.ts';
import { pdf, png } from './files.ts';

const SCREENSHOT = process.env.BROWSER_SCREENSHOT || '/tmp/browser-shot.png';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The webhook payload of the message with this text, once the Service has it. */
async function delivered(receiver: Receiver, text: string, timeoutMs = 10_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = receiver.requests.find((r) => (r.json as { message?: unknown } | undefined)?.message === text);
    if (found) return found.json as Record<string, unknown>;
    if (Date.now() > deadline) throw new Error(`the Service never got "${text}"; it got ${receiver.requests.map((r) => r.body).join(' ')}`);
    await sleep(50);
  }
}

const texts = (messages: ListedMessage[]) => messages.map((m) => m.message);

/** A step a test builds on: it must work, or the test stops here saying why. */
async function register(chat: ChatPage): Promise<number> {
  const answer = await chat.register({ type: 3, version: '1.9.0' });
  expect(answer.status, `POST /devices: ${JSON.stringify(answer.body)}`).to.equal(200);
  return answer.body.data.userId;
}

async function say(chat: ChatPage, message: string): Promise<void> {
  const answer = await chat.send({ message });
  expect(answer.status, `POST /messages: ${JSON.stringify(answer.body)}`).to.equal(200);
}

describe('Client API from a browser on another origin', function () {
  this.timeout(60_000);
  const browser = useBrowser();
  let host: HostPage;
  let t: Tenant;

  before(async () => {
    host = await startHostPage(sharedServer().url);
  });
  after(() => host.close());
  beforeEach(async () => {
    t = await tenant();
  });
  afterEach(() => t.receiver.close());

  const open = (deviceId = newDeviceId()) => ChatPage.open(browser(), host, t.account.identification, deviceId);

  it('registers an anonymous device with a text/plain JSON body, and the page reads the answer', async () => {
    const deviceId = newDeviceId();
    const chat = await open(deviceId);
    const answer = await chat.register({ type: 3, version: '1.9.0' });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body.status).to.equal('SUCCESS');
    expect(answer.body.notifications).to.deep.include({ type: 'success', message: 'device_successfully_subscribed' });
    expect(answer.body.data.userId).to.be.a('number');
    // The page sees only CORS-safelisted and exposed headers; the envelope's type is one.
    expect(answer.headers['content-type']).to.match(/^application\/json/);

    // The body was parsed, not skipped: a registration without one would succeed as well.
    const device = await sharedServer().deps.db.orm.em.fork().findOneOrFail(DeviceSchema, { uniqueAppDeviceId: deviceId });
    expect(device).to.include({ userId: answer.body.data.userId, type: 3, version: '1.9.0', referer: host.url });
  });

  it('sends a text message that reaches the owner Service', async () => {
    const chat = await open();
    const userId = await register(chat);
    const sent = await chat.send({ message: 'hello' });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body.data.messageId).to.be.a('string');

    const payload = await delivered(t.receiver, 'hello');
    expect(payload).to.deep.include({ type: 'message', typeId: 1, requestUrl: host.url, accountId: t.account.id });
    expect(payload.id, 'the id the page was given').to.equal(Number(sent.body.data.messageId));
    expect((payload.user as { id: string }).id).to.equal(String(userId));
  });

  it('shows an agent’s answer, sent through the Service API, to the polling page', async () => {
    const chat = await open();
    const userId = await register(chat);
    await say(chat, 'anyone there?');

    const answer = await client(sharedServer().url).post(`/users/${userId}/messages`, {
      token: t.service.apiKey,
      json: { message: 'Hi there', agent: { id: 1, name: 'Ada' } },
    });
    expect(answer.status, answer.text).to.equal(201);

    const list = await chat.pollMessages('Hi there');
    expect(list.status).to.equal(200);
    const reply = list.body.data.find((m) => m.message === 'Hi there');
    expect(reply, JSON.stringify(list.body.data)).to.not.equal(undefined);
    expect(reply).to.deep.include({ typeId: 2 });
    expect(reply?.agent).to.deep.include({ id: 1, name: 'Ada' });
    expect((list.body.agent as { name?: string } | null)?.name, 'the current agent').to.equal('Ada');
    expect(texts(list.body.data)).to.deep.equal(['Hi there', 'anyone there?']);
  });

  it('uploads a PNG and a PDF with FormData, sends them and fetches them back', async () => {
    const chat = await open();
    await register(chat);
    const files = [
      { bytes: png(), name: 'x.png', type: 'image/png' },
      { bytes: pdf(), name: 'x.pdf', type: 'application/pdf' },
    ];

    for (const file of files) {
      const uploaded = await chat.upload(file.bytes, file.name, file.type);
      expect(uploaded.status, `${file.name}: ${JSON.stringify(uploaded.body)}`).to.equal(200);
      const id = uploaded.body.data.media;
      expect(id).to.be.a('string');
      const sent = await chat.send({ media: { id, description: file.name } });
      expect(sent.status, `${file.name}: ${JSON.stringify(sent.body)}`).to.equal(200);
    }

    const list = await chat.messages();
    expect(list.status).to.equal(200);
    for (const file of files) {
      const media = list.body.data.find((m) => m.media?.description === file.name)?.media;
      if (!media) throw new Error(`${file.name} is not listed: ${JSON.stringify(list.body.data)}`);
      expect(media.mimeType).to.equal(file.type);
      const fetched = await chat.fetchMedia(media);
      expect(fetched.status, file.name).to.equal(200);
      expect(fetched.contentType, file.name).to.equal(file.type);
      expect(fetched.disposition, `${file.name}: an exposed header`).to.contain(file.name);
      expect(Buffer.from(fetched.base64, 'base64').equals(file.bytes), `${file.name}: the same bytes`).to.equal(true);
    }

    // Only to look at: the page's log of calls and the image it fetched back.
    await browser().page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  it('logs in: the anonymous conversation merges into the registered user', async () => {
    const deviceId = newDeviceId();
    const chat = await open(deviceId);
    const anonymousId = await register(chat);
    await say(chat, 'before login');

    await chat.configure(deviceId, authFor(t.account, 'customer-browser'));
    const login = await chat.register({ type: 3, version: '1.9.0' });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    expect(login.body.data.userId, 'the registered user').to.not.equal(anonymousId);

    await say(chat, 'after login');
    const list = await chat.messages();
    expect(list.status, JSON.stringify(list.body)).to.equal(200);
    expect(texts(list.body.data)).to.deep.equal(['after login', 'before login']);
  });

  it('logs out: the registered device is refused without authorization, and a new device starts empty', async () => {
    const deviceId = newDeviceId();
    const chat = await open(deviceId);
    await chat.configure(deviceId, authFor(t.account, 'customer-leaving'));
    const registeredId = await register(chat);
    await say(chat, 'private question');

    await chat.configure(deviceId);
    const refused = await chat.register({ type: 3, version: '1.9.0' });
    // An error answer must carry CORS headers too, or the page would see only a failed fetch.
    expect(refused.status, JSON.stringify(refused.body)).to.equal(403);
    expect(refused.body.status).to.equal('ERROR');
    expect(refused.body.notifications[0]?.message).to.equal('device_requires_authorization');
    expect(refused.body.notifications.map((n) => n.message)).to.include('device_not_registered');

    await chat.configure(newDeviceId());
    const fresh = await chat.register({ type: 3, version: '1.9.0' });
    expect(fresh.status, JSON.stringify(fresh.body)).to.equal(200);
    expect(fresh.body.data.userId).to.not.equal(registeredId);
    const list = await chat.messages();
    expect(list.status).to.equal(200);
    expect(texts(list.body.data)).to.not.include('private question');
    expect(list.body.data).to.deep.equal([]);
  });

  it('refuses a page whose origin the account does not allow, and serves it once allowed', async () => {
    const chat = await open();
    await register(chat);
    const allow = async (allowedOrigins: string[]) => {
      const answer = await client(sharedServer().url).patch(`/adminApi/accounts/${t.account.id}`, {
        token: await adminToken(),
        json: { allowedOrigins },
      });
      expect(answer.status, answer.text).to.equal(200);
    };

    await allow(['https://only.example']);
    // The page reads why (not a bare CORS error, which also means "server down"), and nothing more.
    const refusal = await chat.send({ message: 'from a refused origin' });
    expect(refusal.status).to.equal(403);
    expect(refusal.body.data).to.equal(null);
    expect(refusal.body.notifications).to.deep.equal([{ type: 'error', message: 'origin_not_allowed' }]);
    expect(browser().console.join('\n')).to.not.match(/blocked by CORS policy/);

    await allow([host.origin]);
    const sent = await chat.send({ message: 'from an allowed origin' });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    await delivered(t.receiver, 'from an allowed origin');
    const list = await chat.messages();
    expect(texts(list.body.data), 'a refused origin writes nothing').to.deep.equal(['from an allowed origin']);
    expect(t.receiver.requests.map((r) => r.body).join('\n')).to.not.contain('from a refused origin');
  });
});
