// Replies by email and transcripts, against real servers on loopback: Palaver's own SMTP
// listener (smtp-server) written to by nodemailer, the inbound-mail webhook route, a Service's
// webhook receiver, and an SMTP stand-in receiving what Palaver sends. Absence is asserted on
// the outbox rows and the messages table, never by waiting.
import { createHmac } from 'node:crypto';
import { connect } from 'node:net';
import { expect } from 'chai';
import nodemailer from 'nodemailer';
import { replyAddress, replyToken, verifyReplyAddress } from '../src/email/reply-address.ts';
import { replyText } from '../src/email/reply-text.ts';
import { client, type Client } from './support/http.ts';
import { accountWithDesk } from './support/factories.ts';
import { Receiver } from './support/receiver.ts';
import { sharedServer, startTestServer, type TestServer } from './support/server.ts';
import { emailThrough, SmtpStandIn } from './support/smtp.ts';
import { until } from './support/until.ts';
import { webVisitor } from './support/widget.ts';

const PUBLIC_URL = 'https://chat.palaver.test';
const DOMAIN = 'reply.palaver.test';
const SECRET = 'a reply secret that is long enough to sign addresses';
const WEBHOOK_SECRET = 'an inbound webhook secret, long enough';

describe('replies by email: what the customer wrote', () => {
  const quoted = (lines: string) =>
    lines
      .split('\n')
      .map((l) => `> ${l}`)
      .join('\n');
  const answer = quoted(
    'Hello Bram,\n\nYou have an answer from Fietsenwinkel to your question in the chat:\n\nAda wrote:\nYour bike is ready.',
  );

  const replies: Array<[string, string, string]> = [
    [
      'Gmail',
      `Thanks, I will pick it up tomorrow.\n\nOn Thu, 26 Nov 2026 at 10:02, Support <support@palaver.test> wrote:\n\n${answer}\n`,
      'Thanks, I will pick it up tomorrow.',
    ],
    [
      'Gmail, the "wrote" line wrapped',
      `Great!\n\nOn Thu, Nov 26, 2026 at 10:02 AM Fietsenwinkel Support <\nsupport@palaver.test> wrote:\n\n${answer}\n`,
      'Great!',
    ],
    [
      'Gmail in Dutch',
      `Dank je, ik kom morgen.\n\nOp do 26 nov 2026 om 10:02 schreef Support <support@palaver.test>:\n\n${answer}\n`,
      'Dank je, ik kom morgen.',
    ],
    [
      'Outlook',
      'Yes please, with the red bell.\n\n________________________________\nFrom: Support <support@palaver.test>\nSent: Thursday, November 26, 2026 10:02 AM\nTo: bram@example.com\nSubject: New answer from Fietsenwinkel\n\nHello Bram,\nYour bike is ready.\n',
      'Yes please, with the red bell.',
    ],
    [
      'Outlook in Dutch',
      'Prima, bedankt.\n\n________________________________\nVan: Support <support@palaver.test>\nVerzonden: donderdag 26 november 2026 10:02\nAan: els@example.com\nOnderwerp: Nieuw antwoord van Fietsenwinkel\n\nHallo,\nJe fiets is klaar.\n',
      'Prima, bedankt.',
    ],
    [
      'Apple Mail on an iPhone',
      `Sounds good.\n\nSent from my iPhone\n\n> On 26 Nov 2026, at 10:02, Support <support@palaver.test> wrote:\n>\n${answer}\n`,
      'Sounds good.',
    ],
    [
      'Apple Mail in Dutch',
      `Klinkt goed.\nTot morgen!\n\nVerstuurd vanaf mijn iPhone\n\n> Op 26 nov. 2026 om 10:02 heeft Support <support@palaver.test> het volgende geschreven:\n>\n${answer}\n`,
      'Klinkt goed.\nTot morgen!',
    ],
    ['a signature', 'Fine, thank you.\n\n-- \nBram de Vries\nFietsclub Utrecht\n', 'Fine, thank you.'],
    ['nothing of their own', `\n\nOn Thu, 26 Nov 2026 at 10:02, Support <support@palaver.test> wrote:\n${answer}\n`, ''],
  ];
  for (const [client, text, expected] of replies) {
    it(`keeps only the reply of ${client}`, () => {
      expect(replyText(text)).to.equal(expected);
    });
  }
});

describe('replies by email: the reply address', () => {
  const keys = { domain: DOMAIN, secret: SECRET };

  it('names the account and user, fits a local part, survives case folding, and refuses any change', () => {
    const address = replyAddress(keys, { accountId: 12, userId: 3456789 });
    const local = address.slice(0, address.indexOf('@'));
    expect(local.length).to.be.at.most(64);
    expect(local).to.match(/^reply\+[a-z0-9-]+$/);
    expect(verifyReplyAddress(address, keys)).to.deep.equal({ accountId: 12, userId: 3456789 });
    expect(verifyReplyAddress(address.toUpperCase(), keys)).to.deep.equal({ accountId: 12, userId: 3456789 });
    // Another user under the same signature, another domain, another secret: refused.
    const token = replyToken(SECRET, { accountId: 12, userId: 3456789 });
    const [, user] = token.split('-');
    expect(verifyReplyAddress(address.replace(`-${user}-`, `-${(3456790).toString(36)}-`), keys)).to.equal(null);
    expect(verifyReplyAddress(address.replace(DOMAIN, 'other.test'), keys)).to.equal(null);
    expect(verifyReplyAddress(address, { domain: DOMAIN, secret: 'another secret that is long enough, too' })).to.equal(null);
    expect(verifyReplyAddress('reply+nonsense@' + DOMAIN, keys)).to.equal(null);
  });

  it('still accepts the addresses of the previous secret after a rotation', () => {
    const old = replyAddress({ domain: DOMAIN, secret: 'the old secret, which was long enough' }, { accountId: 1, userId: 2 });
    expect(verifyReplyAddress(old, keys)).to.equal(null);
    expect(verifyReplyAddress(old, { ...keys, previousSecret: 'the old secret, which was long enough' })).to.deep.equal({
      accountId: 1,
      userId: 2,
    });
  });
});

describe('replies by email and transcripts, end to end', function () {
  this.timeout(90_000);
  let smtp: SmtpStandIn;
  let server: TestServer;
  let receiver: Receiver;
  let api: Client;

  before(async () => {
    smtp = await SmtpStandIn.start();
    receiver = await Receiver.start();
    server = await startTestServer({
      publicUrl: PUBLIC_URL,
      email: {
        ...emailThrough(smtp),
        transcriptRateLimit: { points: 2, durationSeconds: 3600 },
        inbound: {
          domain: DOMAIN,
          secret: SECRET,
          smtp: { enabled: true, host: '127.0.0.1', port: 0 },
          webhookSecret: WEBHOOK_SECRET,
          maxBytes: 200_000,
          rateLimit: { points: 5, durationSeconds: 3600 },
        },
      },
      webhooks: { retrySchedule: [0, 1, 1, 1], pollIntervalMs: 100 },
    });
    api = client(server.url);
  });
  after(async () => {
    await server?.stop();
    await smtp?.stop();
    await receiver?.close();
  });

  const db = () => server.deps.db.orm.em.fork().getConnection();

  async function customer(
    contact: Record<string, unknown> | null = { email: `c${Math.random().toString(36).slice(2)}@example.com`, name: 'Bram' },
  ) {
    const { account, service } = await accountWithDesk(server.url, 'Fietsenwinkel', (a) => `${receiver.url}/desk-${a.id}`);
    const { widget, userId } = await webVisitor(account, server.url, 'https://shop.example/help', contact);
    return { account, service, widget, userId, email: (contact?.email as string | undefined) ?? '' };
  }

  type Customer = Awaited<ReturnType<typeof customer>>;

  async function agentSays(c: Customer, text: string): Promise<void> {
    const sent = await api.post(`/users/${c.userId}/messages`, {
      token: c.service.apiKey,
      json: { message: text, agent: { id: 7, name: 'Ada' } },
    });
    expect(sent.status, sent.text).to.equal(201);
  }

  /** The customer's messages as the database holds them (client messages, type 1). */
  async function customerMessages(userId: number) {
    return db().execute<Array<{ id: number; message: string; device_id: number | null; request_url: string | null }>>(
      `select id, message, device_id, request_url from messages where user_id = ? and type_id = 1 order by id`,
      [userId],
    );
  }

  async function messageDeliveries(serviceId: number) {
    const rows = await db().execute<Array<{ payload: string; state: string }>>(
      `select payload, state from deliveries where service_id = ? and kind = 'message' order by seq`,
      [serviceId],
    );
    return rows.map((r) => ({ state: r.state, payload: JSON.parse(r.payload) as Record<string, unknown> }));
  }

  const inboundTransport = () =>
    nodemailer.createTransport({ host: '127.0.0.1', port: server.inboundSmtp?.port, secure: false, ignoreTLS: true });

  function replyMime(to: string, text: string, messageId: string): Promise<Buffer> {
    const composer = nodemailer.createTransport({ streamTransport: true, buffer: true });
    return composer
      .sendMail({
        from: 'Bram <bram@example.com>',
        to,
        subject: 'Re: New answer from Fietsenwinkel',
        messageId,
        text,
      })
      .then((info) => info.message as Buffer);
  }

  const gmailReply = (own: string) =>
    `${own}\n\nOn Thu, 26 Nov 2026 at 10:02, Support <support@palaver.test> wrote:\n\n> Hello Bram,\n> Ada wrote:\n> Your bike is ready.\n`;

  it('listens for replies only when enabled: the shared server binds no SMTP port', async () => {
    const shared = sharedServer();
    expect(shared.config.email.inbound.smtp.enabled).to.equal(false);
    expect(shared.inboundSmtp).to.equal(undefined);
    const refused = await new Promise<string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: shared.config.email.inbound.smtp.port });
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).to.equal('ECONNREFUSED');
    // Nor is the webhook route there.
    const route = await fetch(`${shared.url}/email/inbound`, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: 'x' });
    expect(route.status).to.equal(404);
  });

  it('turns a reply to an emailed answer into a message of the conversation, delivered once, without requestUrl', async () => {
    const c = await customer();
    await agentSays(c, 'Your bike is ready.');
    const [answerEmail] = await until(
      'the answer by email',
      () => Promise.resolve(smtp.to(c.email)),
      (m) => m.length === 1,
    );
    const replyTo = answerEmail?.parsed.replyTo?.value[0]?.address ?? '';
    expect(replyTo).to.match(new RegExp(`^reply\\+[a-z0-9-]+@${DOMAIN.replace(/\./g, '\\.')}$`));
    expect(verifyReplyAddress(replyTo, { domain: DOMAIN, secret: SECRET })).to.deep.equal({ accountId: c.account.id, userId: c.userId });

    const before = (await messageDeliveries(c.service.id)).length;
    const transport = inboundTransport();
    const raw = await replyMime(replyTo, gmailReply('Thanks, I will pick it up tomorrow.'), '<reply-1@mail.example.com>');
    const sent = await transport.sendMail({ envelope: { from: 'bram@example.com', to: [replyTo] }, raw });
    expect(sent.accepted).to.deep.equal([replyTo]);

    const mine = await customerMessages(c.userId);
    expect(mine.map((m) => [m.message, m.device_id, m.request_url])).to.deep.equal([['Thanks, I will pick it up tomorrow.', null, null]]);
    const deliveries = await messageDeliveries(c.service.id);
    expect(deliveries).to.have.length(before + 1);
    const received = await until(
      'the webhook of the reply',
      () => Promise.resolve(receiver.requests.filter((r) => r.path === `/desk-${c.account.id}` && r.body.includes('pick it up'))),
      (r) => r.length > 0,
    );
    const payload = (received[0]?.json as { data?: Record<string, unknown> })?.data ?? (received[0]?.json as Record<string, unknown>);
    expect(JSON.stringify(payload)).to.contain('"message":"Thanks, I will pick it up tomorrow."');
    expect(JSON.stringify(payload)).not.to.contain('requestUrl');

    // The same email again (the sending server's retry): nothing more is written or delivered.
    const again = await transport.sendMail({ envelope: { from: 'bram@example.com', to: [replyTo] }, raw });
    expect(again.accepted).to.deep.equal([replyTo]);
    expect(await customerMessages(c.userId)).to.have.length(1);
    expect(await messageDeliveries(c.service.id)).to.have.length(before + 1);
    await until(
      'the deliveries',
      () => messageDeliveries(c.service.id),
      (d) => d.every((x) => x.state !== 'pending'),
    );
    expect(receiver.requests.filter((r) => r.path === `/desk-${c.account.id}` && r.body.includes('pick it up'))).to.have.length(1);
    transport.close();
  });

  it('refuses a forged or altered reply address at RCPT, and writes nothing', async () => {
    const c = await customer();
    const genuine = replyAddress({ domain: DOMAIN, secret: SECRET }, { accountId: c.account.id, userId: c.userId });
    const forgedUser = replyAddress(
      { domain: DOMAIN, secret: 'not the secret, but long enough to sign' },
      { accountId: c.account.id, userId: c.userId },
    );
    const altered = genuine.replace(/.@/, (m) => (m[0] === 'a' ? 'b@' : 'a@'));
    const rowsBefore = await db().execute<Array<{ n: string }>>(`select count(*) as n from deliveries where service_id = ?`, [
      c.service.id,
    ]);
    const transport = inboundTransport();
    for (const to of [forgedUser, altered, `someone@${DOMAIN}`]) {
      const raw = await replyMime(to, 'Let me in.', `<forged-${Math.random()}@mail.example.com>`);
      const err = await transport.sendMail({ envelope: { from: 'eve@example.com', to: [to] }, raw }).then(
        () => null,
        (e: { responseCode?: number; code?: string }) => e,
      );
      expect(err?.responseCode, to).to.equal(550);
      expect(err?.code).to.equal('EENVELOPE');
    }
    transport.close();
    expect(await customerMessages(c.userId)).to.have.length(0);
    // Counted for the operator (palaver_email_replies_total).
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(Number(/palaver_email_replies_total\{outcome="refused"\} (\d+)/.exec(metrics)?.[1])).to.be.at.least(3);
    const rowsAfter = await db().execute<Array<{ n: string }>>(`select count(*) as n from deliveries where service_id = ?`, [c.service.id]);
    expect(Number(rowsAfter[0]?.n)).to.equal(Number(rowsBefore[0]?.n));
  });

  it('writes the reply of a visitor who signed in since the email in the conversation it moved to', async () => {
    const c = await customer();
    const to = replyAddress({ domain: DOMAIN, secret: SECRET }, { accountId: c.account.id, userId: c.userId });
    c.widget.signIn(`customer-${Math.random().toString(36).slice(2)}`);
    const signedIn = await c.widget.register({ type: 3 });
    expect(signedIn.status, signedIn.text).to.equal(200);
    const registeredId = signedIn.body.data.userId;
    expect(registeredId).not.to.equal(c.userId);
    const transport = inboundTransport();
    await transport.sendMail({
      envelope: { from: 'bram@example.com', to: [to] },
      raw: await replyMime(to, gmailReply('Signed in now.'), '<merged@mail.example.com>'),
    });
    transport.close();
    expect((await customerMessages(registeredId)).map((m) => m.message)).to.include('Signed in now.');
  });

  it('drops an out-of-office reply and a reply with nothing of its own', async () => {
    const c = await customer();
    const to = replyAddress({ domain: DOMAIN, secret: SECRET }, { accountId: c.account.id, userId: c.userId });
    const transport = inboundTransport();
    const ooo = await nodemailer.createTransport({ streamTransport: true, buffer: true }).sendMail({
      from: 'bram@example.com',
      to,
      subject: 'Out of office',
      text: 'I am away until Monday.',
      headers: { 'Auto-Submitted': 'auto-replied' },
    });
    await transport.sendMail({ envelope: { from: 'bram@example.com', to: [to] }, raw: ooo.message });
    await transport.sendMail({
      envelope: { from: 'bram@example.com', to: [to] },
      raw: await replyMime(to, gmailReply(''), '<empty@mail.example.com>'),
    });
    transport.close();
    expect(await customerMessages(c.userId)).to.have.length(0);
  });

  it('refuses a reply over the size limit (552) and, past the rate limit, asks the sender to try later (452)', async () => {
    const c = await customer();
    const to = replyAddress({ domain: DOMAIN, secret: SECRET }, { accountId: c.account.id, userId: c.userId });
    const transport = inboundTransport();
    const send = async (text: string, id: string) =>
      transport.sendMail({ envelope: { from: 'bram@example.com', to: [to] }, raw: await replyMime(to, text, id) }).then(
        () => 250,
        (e: { responseCode?: number }) => e.responseCode,
      );
    expect(await send('x'.repeat(250_000), '<big@mail.example.com>')).to.equal(552);
    expect(await customerMessages(c.userId)).to.have.length(0);
    // Five replies per window in this test's configuration.
    for (let i = 1; i <= 5; i++) expect(await send(`Reply ${i}.`, `<limit-${i}@mail.example.com>`)).to.equal(250);
    expect(await send('Reply 6.', '<limit-6@mail.example.com>')).to.equal(452);
    transport.close();
    expect((await customerMessages(c.userId)).map((m) => m.message)).to.deep.equal([
      'Reply 1.',
      'Reply 2.',
      'Reply 3.',
      'Reply 4.',
      'Reply 5.',
    ]);
  });

  it('takes replies from a hosted provider through the webhook route: signed raw, SendGrid multipart, Postmark JSON', async () => {
    const c = await customer();
    const to = replyAddress({ domain: DOMAIN, secret: SECRET }, { accountId: c.account.id, userId: c.userId });
    const raw = await replyMime(to, gmailReply('Sent through the provider.'), '<hook-1@mail.example.com>');
    const sign = (body: Buffer, secret = WEBHOOK_SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const post = (body: Buffer | FormData | string, headers: Record<string, string>) =>
      fetch(`${server.url}/email/inbound`, { method: 'POST', headers, body });

    // Refused: a wrong signature, no authentication at all, a wrong bearer secret.
    for (const headers of <Array<Record<string, string>>>[
      { 'content-type': 'message/rfc822', 'x-palaver-signature': sign(raw, 'a wrong secret, however long it is') },
      { 'content-type': 'message/rfc822' },
      { 'content-type': 'application/json', authorization: 'Bearer nope' },
    ]) {
      const refused = await post(
        headers['content-type'] === 'application/json' ? JSON.stringify({ RawEmail: raw.toString() }) : raw,
        headers,
      );
      expect(refused.status, JSON.stringify(headers)).to.equal(401);
    }
    // A body signed for another body.
    const tampered = Buffer.from(raw.toString().replace('Sent through', 'Altered by'));
    expect((await post(tampered, { 'content-type': 'message/rfc822', 'x-palaver-signature': sign(raw) })).status).to.equal(401);
    expect(await customerMessages(c.userId)).to.have.length(0);

    const signed = await post(raw, { 'content-type': 'message/rfc822', 'x-palaver-signature': sign(raw) });
    expect(signed.status, await signed.clone().text()).to.equal(200);
    expect(((await signed.json()) as { data: { outcome: string } }).data.outcome).to.equal('written');
    // Again, as a provider retrying: nothing more.
    expect((await post(raw, { 'content-type': 'message/rfc822', 'x-palaver-signature': sign(raw) })).status).to.equal(200);

    const form = new FormData();
    form.append('envelope', JSON.stringify({ to: [to], from: 'bram@example.com' }));
    form.append('email', (await replyMime(to, gmailReply('And through SendGrid.'), '<hook-2@mail.example.com>')).toString());
    const sendgrid = await post(form, { authorization: `Basic ${Buffer.from(`inbound:${WEBHOOK_SECRET}`).toString('base64')}` });
    expect(sendgrid.status, await sendgrid.clone().text()).to.equal(200);

    // Separate file parts (a provider not set to send the raw message): refused, 422.
    const parted = new FormData();
    parted.append('email', 'Subject: x\r\n\r\nhello');
    parted.append('attachment1', new Blob([Buffer.from('abc')], { type: 'text/plain' }), 'a.txt');
    const partedAnswer = await post(parted, { authorization: `Bearer ${WEBHOOK_SECRET}` });
    expect(partedAnswer.status).to.equal(422);
    expect(await partedAnswer.text()).to.contain('file_parts_not_accepted');

    const postmark = await post(
      JSON.stringify({ OriginalRecipient: to, RawEmail: (await replyMime(to, 'And Postmark.', '<hook-3@mail.example.com>')).toString() }),
      { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_SECRET}` },
    );
    expect(postmark.status, await postmark.clone().text()).to.equal(200);

    // A message to an address that is not a signed one: 422, nothing written.
    const stranger = await replyMime(`reply+x@${DOMAIN}`, 'Hello?', '<hook-4@mail.example.com>');
    const refused = await post(stranger, { 'content-type': 'message/rfc822', 'x-palaver-signature': sign(stranger) });
    expect(refused.status).to.equal(422);
    expect(await refused.text()).to.contain('reply_address_invalid');

    expect((await customerMessages(c.userId)).map((m) => m.message)).to.deep.equal([
      'Sent through the provider.',
      'And through SendGrid.',
      'And Postmark.',
    ]);
    expect((await messageDeliveries(c.service.id)).filter((d) => d.payload.typeId === 1)).to.have.length(3);
  });

  it('emails the transcript the customer asks for, with every message, and refuses clearly when it cannot', async () => {
    const none = await customer(null);
    const unknown = await none.widget.call('POST', '/users/me/transcript');
    expect(unknown.status, unknown.text).to.equal(409);
    expect(unknown.text).to.contain('email_unknown');

    const c = await customer({ email: `t${Math.random().toString(36).slice(2)}@example.com`, name: 'Bram', language: 'nl' });
    const empty = await c.widget.call('POST', '/users/me/transcript');
    expect(empty.status).to.equal(409);
    expect(empty.text).to.contain('conversation_empty');
    const said = await c.widget.call('POST', '/messages', { json: { message: 'Is my bike ready?' } });
    expect(said.status, said.text).to.equal(200);
    await agentSays(c, 'Yes, since this morning.');
    // The customer sees the answer, so no answer email goes: only the transcript.
    const seenIds = await db().execute<Array<{ id: number }>>(`select id from messages where user_id = ? and type_id = 2`, [c.userId]);
    await c.widget.call('PUT', '/messages/status/4', { json: { messageIds: seenIds.map((r) => Number(r.id)) } });

    const asked = await c.widget.call<{ email: string }>('POST', '/users/me/transcript');
    expect(asked.status, asked.text).to.equal(202);
    expect(asked.body.data.email).to.equal(c.email);
    const [mail] = await until(
      'the transcript',
      () => Promise.resolve(smtp.to(c.email).filter((m) => m.parsed.subject?.startsWith('Je gesprek'))),
      (m) => m.length === 1,
    );
    expect(mail?.parsed.subject).to.equal('Je gesprek met Fietsenwinkel');
    expect(mail?.parsed.text).to.match(/Jij \(.*UTC\):\nIs my bike ready\?[\s\S]*Ada \(.*UTC\):\nYes, since this morning\./);
    expect(mail?.parsed.replyTo?.value[0]?.address).to.match(/^reply\+/);
    const [row] = await db().execute<Array<{ id: string; state: string; last_status: number }>>(
      `select id, state, last_status from deliveries where user_id = ? and kind = 'email' and payload like '%transcriptThrough%'`,
      [c.userId],
    );
    expect(mail?.parsed.messageId).to.equal(`<${row?.id}@chat.palaver.test>`);
    await until(
      'the transcript row',
      async () => (await db().execute<Array<{ state: string }>>(`select state from deliveries where id = ?`, [row?.id]))[0]?.state,
      (s) => s === 'delivered',
    );

    // Two per window in this test's configuration: the third is refused, and writes no delivery.
    expect((await c.widget.call('POST', '/users/me/transcript')).status).to.equal(202);
    const limited = await c.widget.call('POST', '/users/me/transcript');
    expect(limited.status).to.equal(429);
    const rows = await db().execute<Array<{ n: string }>>(
      `select count(*) as n from deliveries where user_id = ? and payload like '%transcriptThrough%'`,
      [c.userId],
    );
    expect(Number(rows[0]?.n)).to.equal(2);
  });
});
