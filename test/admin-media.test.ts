// Issue 15: conversation files for the dashboard. GET /adminApi/accounts/:accountId/media/…
// serves an upload of the account, by the reference its message carries, to an operator
// holding conversations:read on that account; with the headers clients and Services get.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { adminToken, createAccount, createService, type AccountData } from './support/factories.ts';
import { PDF, PNG } from './support/files.ts';
import { client } from './support/http.ts';
import { sharedServer } from './support/server.ts';
import { Widget } from './support/widget.ts';

/**
 * A widget of the account uploads `bytes` and sends it; answers the path under
 * /adminApi/accounts/<accountId>/media/ that the Admin API's message names.
 */
async function sendFile(account: AccountData, bytes: Buffer, type: string, name: string): Promise<string> {
  const widget = new Widget(account);
  const registered = await widget.register({ type: 3 });
  expect(registered.status, registered.text).to.equal(200);
  const userId = registered.body.data.userId;
  const form = new FormData();
  form.append('media', new Blob([bytes], { type }), name);
  const upload = await fetch(`${widget.baseUrl}/media`, { method: 'POST', headers: widget.headers(), body: form });
  expect(upload.status).to.equal(200);
  const media = ((await upload.json()) as { data: { media: string } }).data.media;
  expect((await widget.send({ media: { id: media } })).status).to.equal(200);
  const messages = await client(sharedServer().url).get<Array<{ media: Record<string, string> | null }>>(
    `/adminApi/accounts/${account.id}/users/${userId}/messages`,
    { token: await adminToken() },
  );
  const shown = messages.body.data.find((m) => m.media)?.media;
  if (!shown) throw new Error(`no media in ${messages.text}`);
  const { year, month, day, filename } = shown;
  expect(shown.id).to.equal(`img/${account.id}/${year}/${month}/${day}/${filename}`);
  return `${year}/${month}/${day}/${filename}`;
}

describe('Admin API: conversation media', function () {
  this.timeout(60_000);
  const api = () => client(sharedServer().url);
  let account: AccountData;
  let other: AccountData;
  let image: string;
  let document: string;
  let theirs: string;

  async function operatorToken(grants: Array<{ permission: string; accountId: number | null }>): Promise<string> {
    const email = `media-${randomBytes(6).toString('hex')}@palaver.test`;
    const created = await api().post('/adminApi/operators', {
      token: await adminToken(),
      json: { email, password: 'media password', grants },
    });
    expect(created.status, created.text).to.equal(201);
    const login = await api().post<{ token: string }>('/adminApi/login', { json: { email, password: 'media password' } });
    return login.body.data.token;
  }

  /** The raw answer: bytes and headers, not the envelope. */
  const download = (accountId: number, path: string, token?: string) =>
    fetch(`${sharedServer().url}/adminApi/accounts/${accountId}/media/${path}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });

  const errorOf = async (answer: Response) =>
    ((await answer.json()) as { notifications: Array<{ message: string }> }).notifications[0]?.message;

  before(async () => {
    account = await createAccount();
    other = await createAccount();
    // A conversation needs an owner Service.
    await createService(account.id, { name: 'Support' });
    await createService(other.id, { name: 'Support' });
    image = await sendFile(account, PNG, 'image/png', 'photo.png');
    document = await sendFile(account, PDF, 'application/pdf', 'invoice.pdf');
    theirs = await sendFile(other, PNG, 'image/png', 'theirs.png');
  });

  it('serves an image inline to an operator with conversations:read on the account: bytes, type, nosniff, private cache', async () => {
    const token = await operatorToken([{ permission: 'conversations:read', accountId: account.id }]);
    const answer = await download(account.id, image, token);
    expect(answer.status).to.equal(200);
    expect(Buffer.from(await answer.arrayBuffer()).equals(PNG)).to.equal(true);
    expect(answer.headers.get('content-type')).to.equal('image/png');
    expect(answer.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(answer.headers.get('cache-control')).to.match(/^private\b/);
    expect(answer.headers.get('content-disposition')).to.equal('inline; filename="photo.png"');
  });

  it('serves a document as an attachment named after the upload', async () => {
    const token = await operatorToken([{ permission: 'conversations:read', accountId: account.id }]);
    const answer = await download(account.id, document, token);
    expect(answer.status).to.equal(200);
    expect(Buffer.from(await answer.arrayBuffer()).equals(PDF)).to.equal(true);
    expect(answer.headers.get('content-type')).to.equal('application/pdf');
    expect(answer.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(answer.headers.get('content-disposition')).to.equal('attachment; filename="invoice.pdf"');
  });

  it('answers 403 without conversations:read on the account, also with it on another account or with accounts:read', async () => {
    for (const grants of [
      [],
      [{ permission: 'accounts:read', accountId: account.id }],
      [{ permission: 'conversations:read', accountId: other.id }],
    ]) {
      const answer = await download(account.id, image, await operatorToken(grants));
      expect(answer.status, JSON.stringify(grants)).to.equal(403);
      expect(await errorOf(answer)).to.equal('permission_denied');
    }
  });

  it("answers 404 media_not_found for an unknown file and for another account's file under this account", async () => {
    const token = await operatorToken([{ permission: 'conversations:read', accountId: account.id }]);
    const unknown = await download(account.id, image.replace(/[0-9a-f-]{36}/, '00000000-0000-4000-8000-000000000000'), token);
    expect(unknown.status).to.equal(404);
    expect(await errorOf(unknown)).to.equal('media_not_found');
    const foreign = await download(account.id, theirs, token);
    expect(foreign.status).to.equal(404);
    expect(await errorOf(foreign)).to.equal('media_not_found');
    // The other account itself, without its grant: refused before anything is looked up.
    const refused = await download(other.id, theirs, token);
    expect(refused.status).to.equal(403);
  });

  it('answers 401 without a token or with a bad one', async () => {
    const missing = await download(account.id, image);
    expect(missing.status).to.equal(401);
    expect(await errorOf(missing)).to.equal('missing_token');
    const bad = await download(account.id, image, 'not-a-token');
    expect(bad.status).to.equal(401);
    expect(await errorOf(bad)).to.equal('invalid_token');
  });

  it('answers 422 naming the field for a path that is no media reference', async () => {
    const token = await operatorToken([{ permission: 'conversations:read', accountId: account.id }]);
    const answer = await download(account.id, '2026/1/1/..%2F..%2Fsecret.png', token);
    expect(answer.status).to.equal(422);
    const body = (await answer.json()) as { notifications: Array<{ message: string; field?: string }> };
    expect(body.notifications.map((n) => n.field)).to.deep.equal(['params.file']);
  });
});

describe('Admin API: files for operator answers (POST …/users/{userId}/media)', function () {
  this.timeout(60_000);
  const api = () => client(sharedServer().url);

  const upload = (accountId: number, userId: number, token: string, bytes: Buffer, type: string, name: string) => {
    const form = new FormData();
    form.append('media', new Blob([bytes], { type }), name);
    return fetch(`${sharedServer().url}/adminApi/accounts/${accountId}/users/${userId}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
  };
  const errorOf = async (answer: Response) =>
    ((await answer.json()) as { notifications: Array<{ message: string }> }).notifications[0]?.message;

  it("an operator's file, then an answer naming it: the customer reads and downloads it like a Service's", async () => {
    const account = await createAccount();
    await createService(account.id, { name: 'Support' });
    const widget = new Widget(account);
    const registered = await widget.register({ type: 3 });
    expect(registered.status, registered.text).to.equal(200);
    const userId = registered.body.data.userId;
    const token = await adminToken();

    const uploaded = await upload(account.id, userId, token, PNG, 'image/png', 'receipt.png');
    expect(uploaded.status).to.equal(201);
    const media = ((await uploaded.json()) as { data: { media: string } }).data.media;
    expect(media).to.match(/^[0-9a-f-]{36}$/);
    const answered = await api().post<{ media: Record<string, string> | null; typeId: number }>(
      `/adminApi/accounts/${account.id}/users/${userId}/messages`,
      { token, json: { media: { id: media, description: 'your receipt' } } },
    );
    expect(answered.status, answered.text).to.equal(201);
    expect(answered.body.data.typeId).to.equal(2);

    const read = await widget.messages();
    expect(read.status, read.text).to.equal(200);
    const shown = (read.body.data as Array<{ media: Record<string, string> | null }>).find((m) => m.media)?.media;
    if (!shown) throw new Error(`no media in ${read.text}`);
    expect(shown).to.include({ description: 'your receipt' });
    const { year, month, day, filename } = shown;
    const bytes = await fetch(`${widget.baseUrl}/media/${year}/${month}/${day}/${filename}`, { headers: widget.headers() });
    expect(bytes.status).to.equal(200);
    expect(Buffer.from(await bytes.arrayBuffer()).equals(PNG)).to.equal(true);
    // Stored as a Service's upload: no device, the file the account's quota counts.
    const [row] = await sharedServer()
      .deps.db.orm.em.fork()
      .getConnection()
      .execute<Array<{ user_id: number; device_id: number | null; size: number | string }>>(
        'select user_id, device_id, size from media where id = ?',
        [media],
      );
    expect([row?.user_id, row?.device_id, Number(row?.size)]).to.deep.equal([userId, null, PNG.length]);
  });

  it('refuses what the Service API refuses: no multipart, a type clients cannot show, a user of another account', async () => {
    const account = await createAccount();
    const other = await createAccount();
    await createService(account.id, { name: 'Support' });
    await createService(other.id, { name: 'Support' });
    const widget = new Widget(account);
    const userId = (await widget.register({ type: 3 })).body.data.userId;
    const token = await adminToken();

    const json = await api().post(`/adminApi/accounts/${account.id}/users/${userId}/media`, { token, json: { media: 'x' } });
    expect([json.status, json.body.notifications[0]?.message]).to.deep.equal([415, 'multipart_required']);
    const program = Buffer.concat([Buffer.from('MZ'), randomBytes(256)]);
    const refused = await upload(account.id, userId, token, program, 'application/octet-stream', 'tool.exe');
    expect([refused.status, await errorOf(refused)]).to.deep.equal([415, 'invalid_media_type']);
    const elsewhere = await upload(other.id, userId, token, PNG, 'image/png', 'photo.png');
    expect([elsewhere.status, await errorOf(elsewhere)]).to.deep.equal([404, 'user_not_found']);
    const count = await sharedServer()
      .deps.db.orm.em.fork()
      .getConnection()
      .execute<Array<{ n: number | string }>>('select count(*) as n from media where user_id = ?', [userId]);
    expect(Number(count[0]?.n)).to.equal(0);
  });
});
