// Answers by email against a real SMTP server on loopback (smtp-server, parsed by mailparser):
// the contact routes of both APIs, the email as received (headers, a Message-ID made of the
// delivery, text and HTML parts, links that work without a login), one email per burst, none
// when the customer saw the answers or while they are connected, unsubscribe honoured, an SMTP
// outage that loses nothing, and a retry after a lost reply that keeps the Message-ID. Outcomes
// are read from the outbox itself, never waited for by sleeping.
import { expect } from 'chai';
import { client, type Client } from './support/http.ts';
import { accountWithDesk, adminToken } from './support/factories.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { emailThrough, SmtpStandIn, type ReceivedMail } from './support/smtp.ts';
import { until } from './support/until.ts';
import { WidgetSocket } from './support/sockets.ts';
import { webVisitor } from './support/widget.ts';

const PUBLIC_URL = 'https://chat.palaver.test';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

interface EmailRow {
  id: string;
  state: string;
  ready: boolean;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  payload: string;
}

describe('answers by email', function () {
  this.timeout(90_000);
  let smtp: SmtpStandIn;
  let server: TestServer;
  let api: Client;
  let token: string;

  before(async () => {
    smtp = await SmtpStandIn.start();
    server = await startTestServer({
      publicUrl: PUBLIC_URL,
      email: {
        ...emailThrough(smtp),
      },
      // Retries a second apart, so that an outage in a test is over in seconds.
      webhooks: { retrySchedule: [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], pollIntervalMs: 100 },
    });
    api = client(server.url);
    token = await adminToken(server.url);
  });
  after(async () => {
    await server?.stop();
    await smtp?.stop();
  });
  beforeEach(() => {
    smtp.received.length = 0;
    smtp.dropAfterData = 0;
    smtp.refused.clear();
  });

  /** An account, its Service, and a web visitor on a page, with these contact details. */
  async function customer(contact: Record<string, unknown> | null = { email: `c${Math.random().toString(36).slice(2)}@example.com` }) {
    const { account, service } = await accountWithDesk(server.url, 'Fietsenwinkel');
    const { widget, userId } = await webVisitor(account, server.url, 'https://shop.example/help?topic=bikes', contact);
    const email = (contact?.email as string | undefined) ?? '';
    return {
      account,
      service,
      widget,
      userId,
      email,
      async agentSays(text: string | null, extra: Record<string, unknown> = {}): Promise<number> {
        const sent = await api.post<{ id: number }>(`/users/${userId}/messages`, {
          token: service.apiKey,
          json: { message: text, agent: { id: 7, name: 'Ada' }, ...extra },
        });
        expect(sent.status, sent.text).to.equal(201);
        return sent.body.data.id;
      },
      async upload(bytes: Buffer, type: string, name: string): Promise<string> {
        const form = new FormData();
        form.append('media', new Blob([bytes], { type }), name);
        const uploaded = await fetch(`${server.url}/users/${userId}/media`, {
          method: 'POST',
          headers: { authorization: `Bearer ${service.apiKey}` },
          body: form,
        });
        expect(uploaded.status).to.equal(201);
        return ((await uploaded.json()) as { data: { media: string } }).data.media;
      },
    };
  }

  function emailRows(userId: number): Promise<EmailRow[]> {
    return server.deps.db.orm.em
      .fork()
      .getConnection()
      .execute<EmailRow[]>(
        `select id, state, ready, attempts, last_status, last_error, payload from deliveries where user_id = ? and kind = 'email' order by seq`,
        [userId],
      );
  }

  const settled = (rows: EmailRow[]) => rows.length > 0 && rows.every((r) => r.state !== 'pending');

  function sentRow(rows: EmailRow[]): EmailRow {
    const sent = rows.filter((r) => r.state === 'delivered' && r.last_status === 250);
    expect(sent, JSON.stringify(rows)).to.have.length(1);
    return sent[0] as EmailRow;
  }

  /** A link of the email, pointed at the test server (the configured public URL is not served). */
  const local = (url: string) => url.replace(PUBLIC_URL, server.url);

  /** A header as it was written (mailparser restructures the List-* headers). */
  function header(mail: ReceivedMail | undefined, name: string): string {
    const line = mail?.parsed.headerLines.find((h) => h.key === name.toLowerCase())?.line ?? '';
    return line
      .slice(line.indexOf(':') + 1)
      .replace(/\r?\n\s+/g, ' ')
      .trim();
  }

  function links(mail: ReceivedMail): string[] {
    return [...(mail.parsed.text ?? '').matchAll(/https?:\/\/\S+/g)].map((m) => m[0]);
  }

  it('keeps contact details: the customer sets them, the Service API and the Admin API show them, the Service wins', async () => {
    const c = await customer(null);
    const bad = await c.widget.call('PUT', '/users/me/contact', { json: { email: 'not an address' } });
    expect(bad.status).to.equal(422);
    const set = await c.widget.call<Record<string, unknown>>('PUT', '/users/me/contact', {
      json: { email: 'ann@example.com', name: 'Ann', language: 'nl' },
    });
    expect(set.status, set.text).to.equal(200);
    expect(set.body.data).to.include({ email: 'ann@example.com', name: 'Ann', language: 'nl', source: 'client', emailUnsubscribed: false });
    const read = await c.widget.call<Record<string, unknown>>('GET', '/users/me/contact');
    expect(read.body.data).to.include({ email: 'ann@example.com' });

    const seen = await api.get<{ contact: Record<string, unknown> }>(`/users/${c.userId}`, { token: c.service.apiKey });
    expect(seen.body.data.contact).to.include({ email: 'ann@example.com', name: 'Ann', source: 'client' });

    const byService = await api.put<{ contact: Record<string, unknown> }>(`/serviceApi/v2.3/users/${c.userId}/contact`, {
      token: c.service.apiKey,
      json: { email: 'ann.de.vries@example.com', name: 'Ann de Vries' },
    });
    expect(byService.status, byService.text).to.equal(200);
    expect(byService.body.data.contact).to.include({ email: 'ann.de.vries@example.com', source: 'service', language: null });
    // The backend's details win: the customer cannot overwrite them.
    const refused = await c.widget.call('PUT', '/users/me/contact', { json: { email: 'other@example.com' } });
    expect(refused.status).to.equal(409);
    expect(refused.text).to.contain('contact_set_by_service');

    const listed = await api.get<Array<{ id: number; contact: Record<string, unknown> }>>(`/adminApi/accounts/${c.account.id}/users`, {
      token,
    });
    expect(listed.body.data.find((u) => u.id === c.userId)?.contact).to.include({ email: 'ann.de.vries@example.com' });
  });

  it('carries the contact details of an anonymous visitor to the customer they sign in as', async () => {
    const c = await customer({ email: 'visitor@example.com', name: 'Vera', language: 'nl' });
    c.widget.signIn(`customer-${Math.random().toString(36).slice(2)}`);
    const signedIn = await c.widget.register({ type: 3 });
    expect(signedIn.status, signedIn.text).to.equal(200);
    const userId = signedIn.body.data.userId;
    expect(userId).not.to.equal(c.userId);
    const seen = await api.get<{ contact: Record<string, unknown> }>(`/users/${userId}`, { token: c.service.apiKey });
    expect(seen.body.data.contact).to.include({ email: 'visitor@example.com', name: 'Vera', language: 'nl', source: 'client' });
  });

  it('emails an unseen answer: headers, Message-ID of the delivery, text and HTML parts, links that work without a login', async () => {
    const c = await customer({ email: 'bram@example.com', name: 'Bram' });
    const mediaId = await c.upload(PNG, 'image/png', 'route.png');
    await c.agentSays('Your bike is ready <b>today</b>.', { media: { id: mediaId, description: 'the route' } });
    const rows = await until('the email', () => emailRows(c.userId), settled);
    const row = sentRow(rows);
    expect(rows).to.have.length(1);
    const [mail] = smtp.to('bram@example.com');
    expect(smtp.received).to.have.length(1);
    const parsed = (mail as ReceivedMail).parsed;
    expect(parsed.messageId).to.equal(`<${row.id}@chat.palaver.test>`);
    expect(parsed.from?.value[0]).to.deep.include({ address: 'support@palaver.test', name: 'Support' });
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value[0] : null).to.deep.include({
      address: 'bram@example.com',
      name: 'Bram',
    });
    expect(parsed.subject).to.equal('New answer from Fietsenwinkel');
    expect(header(mail, 'List-Unsubscribe-Post')).to.equal('List-Unsubscribe=One-Click');
    expect(header(mail, 'Auto-Submitted')).to.equal('auto-generated');
    expect(parsed.text).to.contain('Hello Bram,').and.to.contain('Ada wrote:').and.to.contain('Your bike is ready <b>today</b>.');
    // HTML: the text escaped, no remote image, no script.
    const html = String(parsed.html);
    expect(html).to.contain('Your bike is ready &lt;b&gt;today&lt;/b&gt;.');
    expect(html).not.to.match(/<img|<script/i);

    const [fileLink] = links(mail as ReceivedMail).filter((l) => l.includes('/email/media/'));
    expect(fileLink, String(parsed.text)).to.be.a('string');
    const file = await fetch(local(fileLink as string));
    expect(file.status).to.equal(200);
    expect(file.headers.get('content-type')).to.equal('image/png');
    expect(Buffer.from(await file.arrayBuffer()).equals(PNG)).to.equal(true);
    // A forged link (another path under the same signature) opens nothing.
    const forged = (fileLink as string).replace(/\/email\/media\/([^.]+)\./, (_, body: string) => `/email/media/${body}x.`);
    expect((await fetch(local(forged))).status).to.equal(404);

    // The way back: the page where they chatted, the conversation in its fragment.
    const back = links(mail as ReceivedMail).find((l) => l.startsWith('https://shop.example/help?topic=bikes#palaver-conversation='));
    expect(back, String(parsed.text)).to.be.a('string');

    const unsubscribe = header(mail, 'List-Unsubscribe');
    expect(unsubscribe).to.match(new RegExp(`^<${PUBLIC_URL}/email/unsubscribe/[^>]+>$`));
  });

  it('writes Dutch to a customer whose language is Dutch', async () => {
    const c = await customer({ email: 'els@example.com', language: 'nl' });
    await c.agentSays('Je fiets is klaar.');
    await until('the email', () => emailRows(c.userId), settled);
    const [mail] = smtp.to('els@example.com');
    expect(mail?.parsed.subject).to.equal('Nieuw antwoord van Fietsenwinkel');
    expect(mail?.parsed.text).to.contain('Hallo,').and.to.contain('Ada schreef:').and.to.contain('Afmelden');
  });

  it('sends one email for a burst of three answers', async () => {
    const c = await customer();
    await c.agentSays('One.');
    await c.agentSays('Two.');
    await c.agentSays('Three.');
    const rows = await until('the burst', () => emailRows(c.userId), settled);
    sentRow(rows);
    // The others ended without an email: a later answer's email carried them.
    for (const row of rows.filter((r) => r.last_status !== 250)) expect(row.last_error).to.equal('not sent: superseded by a later answer');
    const mails = smtp.to(c.email);
    expect(mails).to.have.length(1);
    expect(mails[0]?.parsed.subject).to.equal('3 new answers from Fietsenwinkel');
    expect(mails[0]?.parsed.text).to.match(/One\.[\s\S]*Two\.[\s\S]*Three\./);

    // The next answer is a burst of its own: the earlier ones are not sent again.
    await c.agentSays('Four.');
    const after = await until(
      'the next email',
      () => emailRows(c.userId),
      (r) => settled(r) && r.filter((x) => x.last_status === 250).length === 2,
    );
    expect(after.filter((x) => x.last_status === 250)).to.have.length(2);
    const second = smtp.to(c.email)[1];
    expect(second?.parsed.text).to.contain('Four.').and.not.to.contain('One.');
  });

  it('sends nothing when the customer saw the answers', async () => {
    const c = await customer();
    const id = await c.agentSays('Seen at once.');
    const seen = await c.widget.call('PUT', '/messages/status/4', { json: { messageIds: [id] } });
    expect(seen.status, seen.text).to.equal(200);
    const rows = await until('the email delivery', () => emailRows(c.userId), settled);
    expect(rows.map((r) => [r.state, r.last_status, r.last_error])).to.deep.equal([['delivered', null, 'not sent: seen']]);
    expect(smtp.to(c.email)).to.have.length(0);
  });

  it('waits while the customer is connected, and sends once they left without seeing the answer', async () => {
    const c = await customer();
    const socket = new WidgetSocket(c.widget, { baseUrl: server.url });
    await socket.connected();
    await c.agentSays('Are you there?');
    const waiting = await until(
      'the postponed email',
      () => emailRows(c.userId),
      (rows) => rows[0]?.last_error === 'not sent yet: the customer is connected',
    );
    expect(waiting.map((r) => [r.state, r.attempts])).to.deep.equal([['pending', 0]]);
    expect(smtp.to(c.email)).to.have.length(0);
    socket.close();
    const rows = await until('the email', () => emailRows(c.userId), settled);
    sentRow(rows);
    expect(smtp.to(c.email)).to.have.length(1);
  });

  it('honours unsubscribe: after the link, not one email delivery more', async () => {
    const c = await customer();
    await c.agentSays('First answer.');
    await until('the email', () => emailRows(c.userId), settled);
    const [mail] = smtp.to(c.email);
    const link = header(mail, 'List-Unsubscribe').slice(1, -1);
    // GET only shows the button (mail scanners open links); POST records it.
    const page = await fetch(local(link));
    expect(page.status).to.equal(200);
    expect(await page.text()).to.contain('<form method="post">');
    expect((await emailRows(c.userId)).length).to.equal(1);
    const done = await fetch(local(link), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(done.status).to.equal(200);
    const contact = await c.widget.call<Record<string, unknown>>('GET', '/users/me/contact');
    expect(contact.body.data.emailUnsubscribed).to.equal(true);

    await c.agentSays('Second answer.');
    await c.agentSays('Third answer.');
    // The answers are written (their commits are behind us): no email delivery came with them.
    const rows = await emailRows(c.userId);
    expect(rows).to.have.length(1);
    expect(smtp.to(c.email)).to.have.length(1);
    // A forged unsubscribe link is refused.
    expect((await fetch(local(link.slice(0, -2) + 'xx'), { method: 'POST' })).status).to.equal(404);
  });

  it('loses nothing in an SMTP outage under load: every email arrives once the server is back', async () => {
    const customers = await Promise.all([1, 2, 3, 4, 5, 6].map(() => customer()));
    await smtp.stop();
    try {
      await Promise.all(
        customers.map(async (c, i) => {
          await c.agentSays(`Answer A to customer ${i}.`);
          await c.agentSays(`Answer B to customer ${i}.`);
        }),
      );
      // Every customer's email was attempted and failed (the server is down), and waits for a retry.
      for (const c of customers) {
        await until(
          'a failed attempt',
          () => emailRows(c.userId),
          (rows) =>
            rows.some((r) => r.state === 'pending' && r.attempts > 0 && /ECONNREFUSED|ECONNECTION|ESOCKET/.test(r.last_error ?? '')),
        );
      }
      expect(smtp.received).to.have.length(0);
    } finally {
      await smtp.listen();
    }
    for (const c of customers) await until('the email after the outage', () => emailRows(c.userId), settled);
    expect(smtp.received).to.have.length(customers.length);
    for (const [i, c] of customers.entries()) {
      const mails = smtp.to(c.email);
      expect(mails, c.email).to.have.length(1);
      expect(mails[0]?.parsed.text).to.contain(`Answer A to customer ${i}.`).and.to.contain(`Answer B to customer ${i}.`);
      expect(mails[0]?.parsed.messageId).to.equal(`<${sentRow(await emailRows(c.userId)).id}@chat.palaver.test>`);
    }
  });

  it('keeps the Message-ID when it retries after the server took the message but the reply was lost', async () => {
    const c = await customer();
    smtp.dropAfterData = 1;
    await c.agentSays('Did you get this?');
    const rows = await until('the email', () => emailRows(c.userId), settled);
    const row = sentRow(rows);
    expect(row.attempts).to.equal(2);
    const mails = smtp.to(c.email);
    expect(mails).to.have.length(2);
    expect(mails.map((m) => m.parsed.messageId)).to.deep.equal([`<${row.id}@chat.palaver.test>`, `<${row.id}@chat.palaver.test>`]);
    expect(mails[1]?.parsed.text).to.equal(mails[0]?.parsed.text);

    // The operator sees both attempts of the one delivery.
    const attempts = await api.get<Array<{ outcome: string }>>(`/adminApi/deliveries/${row.id}/attempts`, { token });
    expect(attempts.status, attempts.text).to.equal(200);
    expect(attempts.body.data.map((a) => a.outcome)).to.deep.equal(['retry', 'delivered']);
  });

  it('retries the same email even when a later answer came meanwhile, and sends the later one after it', async () => {
    const c = await customer();
    smtp.dropAfterData = 1;
    await c.agentSays('First, taken but unanswered.');
    await until(
      'the first attempt',
      () => Promise.resolve(smtp.to(c.email).length),
      (n) => n === 1,
    );
    await c.agentSays('Second, written before the retry.');
    const rows = await until(
      'both emails',
      () => emailRows(c.userId),
      (r) => settled(r) && r.length === 2,
    );
    expect(rows.map((r) => [r.state, r.last_status])).to.deep.equal([
      ['delivered', 250],
      ['delivered', 250],
    ]);
    const mails = smtp.to(c.email);
    expect(mails.map((m) => m.parsed.messageId)).to.deep.equal([
      `<${rows[0]?.id}@chat.palaver.test>`,
      `<${rows[0]?.id}@chat.palaver.test>`,
      `<${rows[1]?.id}@chat.palaver.test>`,
    ]);
    expect(mails[1]?.parsed.text).to.contain('First, taken').and.not.to.contain('Second');
    expect(mails[2]?.parsed.text).to.contain('Second').and.not.to.contain('First, taken');
  });

  it('ends an email refused by the server dead, in the operator log, and sends it when the operator asks again', async () => {
    const c = await customer();
    smtp.refused.add(c.email);
    await c.agentSays('Refused at first.');
    const rows = await until('the refused email', () => emailRows(c.userId), settled);
    expect(rows.map((r) => [r.state, r.last_status])).to.deep.equal([['dead', 550]]);
    expect(smtp.to(c.email)).to.have.length(0);
    const log = await api.get<Array<{ id: string; userId: number; kind: string }>>(
      `/adminApi/accounts/${c.account.id}/email-deliveries?state=dead`,
      { token },
    );
    expect(log.status, log.text).to.equal(200);
    expect(log.body.data.map((d) => [d.id, d.userId, d.kind])).to.deep.equal([[rows[0]?.id, c.userId, 'email']]);

    smtp.refused.clear();
    const again = await api.post(`/adminApi/deliveries/${rows[0]?.id}/redeliver`, { token });
    expect(again.status, again.text).to.equal(200);
    const after = await until('the redelivered email', () => emailRows(c.userId), settled);
    expect(sentRow(after).id).to.equal(rows[0]?.id);
    expect(smtp.to(c.email)).to.have.length(1);
  });

  it('erases the contact details and the emails with the user', async () => {
    const c = await customer();
    await c.agentSays('Before erasure.');
    await until('the email', () => emailRows(c.userId), settled);
    const erased = await api.delete(`/adminApi/accounts/${c.account.id}/users/${c.userId}`, { token });
    expect(erased.status, erased.text).to.equal(200);
    expect(await emailRows(c.userId)).to.have.length(0);
    const [user] = await server.deps.db.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ n: string }>>('select count(*) as n from users where id = ?', [c.userId]);
    expect(Number(user?.n)).to.equal(0);
  });
});
