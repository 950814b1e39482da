// Rich agent messages (title, buttons, quick replies, carousel) from the Service API to every
// reader of a conversation, in the reference shape; their validation; and the root agent's
// `isTyping` as the number (or null) all three Parley libraries parse.
import { expect } from 'chai';
import { adminToken, type AccountData } from './support/factories.ts';
import { PNG } from './support/files.ts';
import { client } from './support/http.ts';
import { expectNothingEnqueued } from './support/outbox.ts';
import { MESSAGE, shapeProblems, type JsonType } from './support/parley-shapes.ts';
import { sharedServer, startTestServer, type TestServer } from './support/server.ts';
import { WidgetSocket } from './support/sockets.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

type Json = Record<string, unknown>;

const ada = { id: 7, name: 'Ada', avatar: null };

const BUTTONS = [
  { title: 'Open the shop', payload: 'https://shop.example/deals?from=chat', type: 'webUrl' },
  { title: 'Call us', payload: 'tel:+31612345678', type: 'phoneNumber' },
  { title: 'Question about furniture', payload: 'I have a question about furniture', type: 'reply' },
];

/** A card as the clients read it: every key of a message but the id, which is its message's. */
const { id: _id, ...CAROUSEL_ITEM } = MESSAGE;
const BUTTON: Readonly<Record<string, JsonType[]>> = { title: ['string'], payload: ['string'], type: ['string'] };

/** Every key and type the clients read, on the message, its buttons, its cards and theirs. */
function richShapeProblems(message: Json): string[] {
  const buttons = (list: unknown, where: string) =>
    (list as Json[]).flatMap((b, i) => [
      ...shapeProblems(b, BUTTON, `${where}.buttons.${i}`),
      ...(['webUrl', 'phoneNumber', 'reply'].includes(b.type as string) ? [] : [`${where}.buttons.${i}.type is ${String(b.type)}`]),
    ]);
  return [
    ...shapeProblems(message, MESSAGE, 'message'),
    ...buttons(message.buttons, 'message'),
    ...(message.quickReplies as unknown[]).flatMap((q, i) => (typeof q === 'string' ? [] : [`message.quickReplies.${i} is not a string`])),
    ...(message.carousel as Json[]).flatMap((item, i) => [
      ...shapeProblems(item, CAROUSEL_ITEM, `message.carousel.${i}`),
      ...buttons(item.buttons, `message.carousel.${i}`),
    ]),
  ];
}

describe('rich agent messages', function () {
  this.timeout(30_000);
  let t: Tenant;
  let widget: Widget;
  let userId: number;
  const sockets: WidgetSocket[] = [];
  const api = () => client(sharedServer().url);
  const asService = {
    post: <T = Json>(path: string, json: unknown) => api().post<T>(path, { token: t.service.apiKey, json }),
    get: <T = Json>(path: string) => api().get<T>(path, { token: t.service.apiKey }),
  };

  async function upload(name: string): Promise<string> {
    const form = new FormData();
    form.append('media', new Blob([PNG], { type: 'image/png' }), name);
    const answer = await fetch(`${sharedServer().url}/users/${userId}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.service.apiKey}` },
      body: form,
    });
    expect(answer.status).to.equal(201);
    return ((await answer.json()) as { data: { media: string } }).data.media;
  }

  beforeEach(async () => {
    t = await tenant();
    widget = new Widget(t.account);
    userId = (await widget.register()).body.data.userId;
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await t.receiver.close();
  });

  it('buttons of all three types, quick replies and a carousel with an image reach every reader in the reference shape', async () => {
    const socket = new WidgetSocket(widget);
    sockets.push(socket);
    await socket.connected();
    const imageId = await upload('sofa.png');

    const withButtons = await asService.post<Json>(`/users/${userId}/messages`, {
      title: 'Our offer',
      message: 'Pick one',
      buttons: BUTTONS,
      quickReplies: ['Yes', 'No', 'Maybe later'],
      agent: ada,
    });
    expect(withButtons.status, withButtons.text).to.equal(201);
    const withCarousel = await asService.post<Json>(`/users/${userId}/messages`, {
      carousel: [
        {
          title: 'The Sofa',
          message: 'Three seats, blue',
          media: { id: imageId, description: 'a blue sofa' },
          buttons: [{ title: 'Buy', payload: 'https://shop.example/sofa', type: 'webUrl' }],
        },
        { title: 'The Chair', buttons: [{ title: 'Tell me more', payload: 'More about the chair', type: 'reply' }] },
      ],
      agent: ada,
    });
    expect(withCarousel.status, withCarousel.text).to.equal(201);
    await expectNothingEnqueued([t.service.id], 'agent messages are not delivered back to Services: deliveries');

    // GET /messages, unversioned and as the libraries call it.
    const page = await widget.messages();
    const versioned = await new Widget(t.account, widget.deviceId, undefined, '/clientApi/v1.9').messages();
    expect(versioned.status).to.equal(200);
    expect(versioned.body.data, 'the same messages under /clientApi/v1.9').to.deep.equal(page.body.data);
    const [carouselMessage, buttonsMessage] = page.body.data as unknown as Json[];
    for (const message of [carouselMessage, buttonsMessage]) expect(richShapeProblems(message ?? {})).to.deep.equal([]);

    expect(buttonsMessage).to.deep.include({
      id: (withButtons.body.data as { id: number }).id,
      typeId: 2,
      title: 'Our offer',
      message: 'Pick one',
      buttons: BUTTONS,
      quickReplies: ['Yes', 'No', 'Maybe later'],
      carousel: [],
      custom: [],
      media: null,
      image: null,
    });
    expect(buttonsMessage, 'the answer to the Service is the same object').to.deep.equal(withButtons.body.data);

    expect(carouselMessage).to.deep.include({ message: null, title: null, buttons: [], quickReplies: [], media: null });
    const [sofa, chair] = carouselMessage?.carousel as Json[];
    expect(sofa).to.deep.include({
      time: carouselMessage?.time,
      typeId: 2,
      status: 2,
      agent: null,
      title: 'The Sofa',
      message: 'Three seats, blue',
      buttons: [{ title: 'Buy', payload: 'https://shop.example/sofa', type: 'webUrl' }],
      carousel: [],
      quickReplies: [],
      custom: [],
    });
    expect(sofa).to.not.have.property('id');
    const media = sofa?.media as Record<string, string>;
    expect(media).to.include({ mimeType: 'image/png', description: 'a blue sofa' });
    expect(media.id).to.match(new RegExp(`^img/${t.account.id}/\\d{4}/\\d{1,2}/\\d{1,2}/[0-9a-f-]{36}\\.png$`));
    expect(sofa?.image).to.equal(media.id);
    const file = await fetch(`${sharedServer().url}/media/${media.year}/${media.month}/${media.day}/${media.filename}`, {
      headers: widget.headers(),
    });
    expect(file.status, 'the user can fetch the card’s image').to.equal(200);
    expect(chair).to.deep.include({ title: 'The Chair', message: null, media: null, image: null });
    expect(chair?.buttons).to.deep.equal([{ title: 'Tell me more', payload: 'More about the chair', type: 'reply' }]);

    // The socket gets the very objects of GET /messages.
    await socket.expectExactly({ message: 2, agent: 1 });
    expect(socket.messages()).to.deep.equal([buttonsMessage, carouselMessage]);

    // The Service's and the Admin API's reads of the conversation show them too.
    for (const prefix of ['', '/serviceApi/v2.3']) {
      const read = await asService.get<Json[]>(`${prefix}/users/${userId}/messages`);
      expect(read.body.data.slice(0, 2), `Service read ${prefix || '/'}`).to.deep.equal([carouselMessage, buttonsMessage]);
    }
    const admin = await api().get<Json[]>(`/adminApi/accounts/${t.account.id}/users/${userId}/messages`, { token: await adminToken() });
    expect(admin.status).to.equal(200);
    expect(admin.body.data.slice(0, 2)).to.deep.equal([carouselMessage, buttonsMessage]);
  });

  it('a message with none of them answers empty arrays and null, as before', async () => {
    const sent = await asService.post<Json>(`/users/${userId}/messages`, { message: 'Plain', agent: ada, title: null, buttons: [] });
    expect(sent.status).to.equal(201);
    await widget.send('from the user');
    for (const message of (await widget.messages()).body.data as unknown as Json[]) {
      expect(richShapeProblems(message)).to.deep.equal([]);
      expect(message).to.deep.include({ title: null, buttons: [], quickReplies: [], carousel: [], custom: [] });
    }
  });

  it('names the field of every refused part with 422, and writes nothing', async () => {
    const long = (n: number) => 'x'.repeat(n);
    const reply = (payload: string) => ({ title: 'A reply', payload, type: 'reply' });
    const cases: Array<[string, Json]> = [
      ['body.buttons.0.type', { message: 'x', buttons: [{ title: 'Mail us', payload: 'mailto:a@b.example', type: 'email' }] }],
      ['body.buttons.0.payload', { message: 'x', buttons: [{ title: 'Open', payload: 'javascript:alert(1)', type: 'webUrl' }] }],
      ['body.buttons.0.payload', { message: 'x', buttons: [{ title: 'Open', payload: 'ftp://files.example/a', type: 'webUrl' }] }],
      ['body.buttons.0.payload', { message: 'x', buttons: [{ title: 'Open', payload: 'shop.example', type: 'webUrl' }] }],
      ['body.buttons.0.payload', { message: 'x', buttons: [{ title: 'Call', payload: '+31612345678', type: 'phoneNumber' }] }],
      ['body.buttons.0.payload', { message: 'x', buttons: [{ title: 'Call', payload: 'tel:call-us', type: 'phoneNumber' }] }],
      ['body.buttons.0.payload', { message: 'x', buttons: [reply('   ')] }],
      ['body.buttons.0.payload', { message: 'x', buttons: [reply(long(2049))] }],
      ['body.buttons.0.title', { message: 'x', buttons: [{ title: '', payload: 'Yes', type: 'reply' }] }],
      ['body.buttons', { message: 'x', buttons: Array.from({ length: 11 }, () => reply('Yes')) }],
      ['body.quickReplies', { message: 'x', quickReplies: Array.from({ length: 11 }, (_, i) => `Reply ${i}`) }],
      ['body.quickReplies.1', { message: 'x', quickReplies: ['Fine', long(101)] }],
      ['body.quickReplies.0', { message: 'x', quickReplies: [''] }],
      ['body.title', { message: 'x', title: long(256) }],
      ['body.carousel', { carousel: Array.from({ length: 11 }, () => ({ title: 'Card' })) }],
      ['body.carousel.0.message', { carousel: [{}] }],
      ['body.carousel.0.title', { carousel: [{ title: long(256) }] }],
      ['body.carousel.0.media.id', { carousel: [{ media: { id: 'not-an-upload' } }] }],
      [
        'body.carousel.1.buttons.0.payload',
        { carousel: [{ title: 'Ok' }, { title: 'Card', buttons: [{ title: 'Call', payload: 'tel:', type: 'phoneNumber' }] }] },
      ],
      ['body.message', { quickReplies: ['Yes', 'No'] }],
    ];
    for (const [field, body] of cases) {
      const answer = await asService.post(`/users/${userId}/messages`, { ...body, agent: ada });
      expect(answer.status, JSON.stringify(body).slice(0, 200)).to.equal(422);
      expect(
        answer.body.notifications.map((n) => (n as { field?: string }).field),
        JSON.stringify(body).slice(0, 200),
      ).to.deep.equal([field]);
    }
    // A card's image must be an upload of this very conversation.
    const other = new Widget(t.account);
    await other.register();
    const elsewhere = await asService.post(`/users/${userId}/messages`, {
      carousel: [{ title: 'Card', media: { id: '00000000-0000-4000-8000-000000000000' } }],
      agent: ada,
    });
    expect(elsewhere.status).to.equal(404);
    expect(elsewhere.body.notifications[0]?.message).to.equal('media_not_found');
    expect((await widget.messages()).body.data).to.deep.equal([]);
  });

  it('accepts tel: URIs with separators and the tel:// form of the reference bodies', async () => {
    const sent = await asService.post<Json>(`/users/${userId}/messages`, {
      buttons: ['tel:+31-6-1234.5678', 'tel://+31123456789', 'tel:0612345678'].map((payload) => ({
        title: 'Call',
        payload,
        type: 'phoneNumber',
      })),
      agent: ada,
    });
    expect(sent.status, sent.text).to.equal(201);
    expect((sent.body.data.buttons as Json[]).map((b) => b.payload)).to.deep.equal([
      'tel:+31-6-1234.5678',
      'tel://+31123456789',
      'tel:0612345678',
    ]);
  });
});

describe('agent.isTyping', function () {
  this.timeout(60_000);
  // A server of its own whose typing lasts a minute: the reads below must see it still typing
  // however slow the machine (the suite's configuration ends typing after 300 ms).
  let server: TestServer;
  let account: AccountData;
  let apiKey: string;
  const sockets: WidgetSocket[] = [];

  before(async () => {
    server = await startTestServer({ client: { typingTimeoutMs: 60_000 } });
    const api = client(server.url);
    const token = await adminToken(server.url);
    account = (await api.post<AccountData>('/adminApi/accounts', { token, json: { name: 'Typing' } })).body.data;
    const service = await api.post<{ apiKey: string }>(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 'Desk' } });
    expect(service.status, service.text).to.equal(201);
    apiKey = service.body.data.apiKey;
  });
  after(async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await server?.stop();
  });

  it('is the Unix time in seconds until which the current agent types, else null, wherever an agent leaves the server', async () => {
    const api = client(server.url);
    const widget = new Widget(account, undefined, undefined, '', server.url);
    const userId = (await widget.register()).body.data.userId;
    const socket = new WidgetSocket(widget);
    sockets.push(socket);
    await socket.connected();
    const post = <T = Json>(path: string, json?: unknown) => api.post<T>(path, { token: apiKey, json });
    const rootAgent = async () => ((await widget.messages()).body as unknown as { agent: { isTyping: unknown } | null }).agent;

    await post(`/users/${userId}/messages`, { message: 'Let me look', agent: ada });
    expect(await rootAgent()).to.deep.equal({ ...ada, isTyping: null });

    const started = await post<{ until: string }>(`/users/${userId}/typing`, { isTyping: true, agent: ada });
    const until = Math.ceil(Date.parse(started.body.data.until) / 1000);
    expect(until).to.be.above(Date.now() / 1000);
    expect(await rootAgent()).to.deep.equal({ ...ada, isTyping: until });
    for (const path of ['/clientApi/v1.9/messages', '/clientApi/v1.6/messages']) {
      const versioned = await widget.messages(path);
      expect((versioned.body as unknown as { agent: unknown }).agent, path).to.deep.equal({ ...ada, isTyping: until });
    }
    const user = await api.get<{ agent: unknown }>(`/users/${userId}`, { token: apiKey });
    expect(user.body.data.agent, 'the Service API reads it the same').to.deep.equal({ ...ada, isTyping: until });
    const admin = await api.get(`/adminApi/accounts/${account.id}/users/${userId}/messages`, { token: await adminToken(server.url) });
    expect((admin.body as unknown as { agent: unknown }).agent, 'and the Admin API').to.deep.equal({ ...ada, isTyping: until });
    // The socket push keeps its top-level boolean; its agent carries the same number.
    const [pushed] = await socket.waitFor('agentTyping', 1);
    expect(pushed).to.deep.equal({ agent: { ...ada, isTyping: until }, isTyping: true });
    // Message-level agents never carry it.
    expect((await widget.messages()).body.data[0]?.agent).to.deep.equal({ ...ada, isTyping: null });

    await post(`/users/${userId}/typing`, { isTyping: false, agent: ada });
    expect(await rootAgent()).to.deep.equal({ ...ada, isTyping: null });
    const [, stopped] = await socket.waitFor('agentTyping', 2);
    expect(stopped).to.deep.equal({ agent: { ...ada, isTyping: null }, isTyping: false });

    // Another agent typing is not the current agent typing.
    await post(`/users/${userId}/typing`, { isTyping: true, agent: { id: 8, name: 'Grace' } });
    expect(await rootAgent()).to.deep.equal({ ...ada, isTyping: null });

    await post(`/users/${userId}/typing`, { isTyping: true, agent: ada });
    expect((await rootAgent())?.isTyping).to.be.a('number');
    await api.put(`/users/${userId}/agent/unset`, { token: apiKey });
    expect(await rootAgent(), 'no current agent after unset').to.equal(null);
  });
});
