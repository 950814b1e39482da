// Client API events (with the server's stopTyping), media uploads and downloads, and the
// per-device write limit.
import { expect } from 'chai';
import { client } from './support/http.ts';
import { TypingTimeouts } from '../src/conversations/client-events.ts';
import { receivedExactly } from './support/outbox.ts';
import { TEST_ADMIN, sharedServer, startTestServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget, type ClientMessage } from './support/widget.ts';

import { COMPOUND_FILE, CSV, DOCX, MP3, MP4, PDF, PNG, TEXT, WEBP } from './support/files.ts';

async function upload(widget: Widget, bytes: Buffer, filename: string, type = 'image/png') {
  const form = new FormData();
  form.append('media', new Blob([bytes], { type }), filename);
  const response = await fetch(`${widget.baseUrl}${widget.prefix}/media`, { method: 'POST', headers: widget.headers(), body: form });
  return {
    status: response.status,
    body: (await response.json()) as { data: { media: string }; notifications: Array<{ message: string }> },
  };
}

describe('Client API: events, media and limits', function () {
  this.timeout(30_000);
  let t: Tenant;
  let widget: Widget;
  let userId: number;

  beforeEach(async () => {
    t = await tenant();
    widget = new Widget(t.account);
    userId = (await widget.register()).body.data.userId;
  });
  afterEach(() => t.receiver.close());

  describe('events', () => {
    // The shared server's typing timeout (config/test.json) is short, so that the test of the
    // server's own stopTyping ends soon; on a loaded machine it may also lapse between two calls of
    // a test. The tests of what the client's own events do type against a node whose timer
    // cannot lapse during the test: a real TypingTimeouts with an hour's timeout, in place of the
    // node's for the test. Client API requests read it from the deps at every call.
    let typing: TypingTimeouts;
    const longTyping = () => {
      const server = sharedServer();
      const node = server.deps.typing;
      typing = new TypingTimeouts(3_600_000, () => server.deps.db.orm.em.fork(), server.deps.logger);
      server.deps.typing = typing;
      return () => {
        typing.close();
        server.deps.typing = node;
      };
    };
    /** Whether a stopTyping of the node's own is due for the user: its timer is set. */
    const stopTypingDue = (user: number) => typing['timers'].has(user);

    it('delivers startTyping, stopTyping and chatOpened as Event payloads', async () => {
      const restore = longTyping();
      try {
        for (const name of ['startTyping', 'stopTyping', 'ChatOpened']) {
          const answer = await widget.call('POST', `/services/event/${name}`);
          expect(answer.status, name).to.equal(200);
          expect(answer.body.status).to.equal('SUCCESS');
        }
      } finally {
        restore();
      }
      const requests = await receivedExactly(t.receiver, t.service.id, 3);
      expect(requests.map((r) => r.json)).to.deep.equal(
        ['startTyping', 'stopTyping', 'chatOpened'].map((name) => ({
          type: 'event',
          body: {
            name,
            body: { accountId: t.account.id, accountIdentification: t.account.identification },
            user: { id: String(userId), uniqueIdentifier: null, additionalInformation: null },
          },
        })),
      );
    });

    it('sends stopTyping itself when a client goes quiet after startTyping', async () => {
      await widget.call('POST', '/services/event/startTyping');
      const requests = await receivedExactly(t.receiver, t.service.id, 2);
      expect(requests.map((r) => (r.json as { body: { name: string } }).body.name)).to.deep.equal(['startTyping', 'stopTyping']);
    });

    it('sends no extra stopTyping when the client sent one', async () => {
      const restore = longTyping();
      try {
        await widget.call('POST', '/services/event/startTyping');
        expect(stopTypingDue(userId), 'a stopTyping due after startTyping').to.equal(true);
        await widget.call('POST', '/services/event/stopTyping');
        // No timer, no stopTyping of the node's own: none can come, now or later.
        expect(stopTypingDue(userId), 'a stopTyping due after the client sent one').to.equal(false);
      } finally {
        restore();
      }
      const requests = await receivedExactly(t.receiver, t.service.id, 2);
      expect(requests.map((r) => (r.json as { body: { name: string } }).body.name)).to.deep.equal(['startTyping', 'stopTyping']);
    });

    it('refuses an unknown event and an unregistered device', async () => {
      expect((await widget.call('POST', '/services/event/startDancing')).status).to.equal(422);
      expect((await new Widget(t.account).call('POST', '/services/event/startTyping')).status).to.equal(404);
    });
  });

  describe('media', () => {
    it('uploads an image, sends it as a message and serves it to its conversation', async () => {
      const uploaded = await upload(widget, PNG, 'photo.png');
      expect(uploaded.status).to.equal(200);
      const mediaId = uploaded.body.data.media;
      expect(mediaId).to.match(/^[0-9a-f-]{36}$/);

      const sent = await widget.send({ media: { id: mediaId, description: 'my photo' } });
      expect(sent.status).to.equal(200);
      const [request] = await t.receiver.waitFor(1);
      const message = (request?.json as { message: string }).message;
      expect(message).to.match(new RegExp(`^\\{\\{img/${t.account.id}/\\d{4}/\\d{1,2}/\\d{1,2}/${mediaId}\\.png\\}\\}$`));

      const list = await widget.messages();
      const shown = list.body.data[0] as ClientMessage;
      expect(shown.message).to.equal(null);
      expect(shown.image).to.equal(message.slice(2, -2));
      expect(shown.media).to.include({ id: shown.image, mimeType: 'image/png', filename: `${mediaId}.png`, description: 'my photo' });

      const { year, month, day, filename } = shown.media as Record<string, string>;
      const file = await fetch(`${widget.baseUrl}/media/${year}/${month}/${day}/${filename}`, { headers: widget.headers() });
      expect(file.status).to.equal(200);
      expect(file.headers.get('content-type')).to.equal('image/png');
      expect(Buffer.from(await file.arrayBuffer()).equals(PNG)).to.equal(true);

      const stranger = new Widget(t.account);
      await stranger.register();
      const stolen = await fetch(`${widget.baseUrl}/media/${year}/${month}/${day}/${filename}`, { headers: stranger.headers() });
      expect(stolen.status).to.equal(404);
      const reused = await stranger.send({ media: { id: mediaId } });
      expect(reused.status).to.equal(404);
      expect(reused.body.notifications[0]?.message).to.equal('media_not_found');
    });

    it('decides the type by the bytes: a text file named .png is refused', async () => {
      const answer = await upload(widget, Buffer.from('#!/bin/sh\necho not an image\n'), 'innocent.png', 'image/png');
      expect(answer.status).to.equal(415);
      expect(answer.body.notifications[0]?.message).to.equal('invalid_media_type');
    });

    it('takes the documents, audio and video the clients render, and serves each with its type as an attachment', async () => {
      const cases: Array<[Buffer, string, string, string]> = [
        [PDF, 'invoice.pdf', 'application/pdf', 'pdf'],
        [DOCX, 'letter.docx', 'application/octet-stream', 'docx'],
        [COMPOUND_FILE, 'old letter.doc', 'application/msword', 'doc'],
        [COMPOUND_FILE, 'sheet.xls', 'application/octet-stream', 'xls'],
        [CSV, 'orders.csv', 'text/csv', 'csv'],
        [TEXT, 'note.txt', 'text/plain', 'txt'],
        [MP3, 'voice.mp3', 'audio/mpeg', 'mp3'],
        [MP4, 'clip.mp4', 'video/mp4', 'mp4'],
      ];
      const expectedType: Record<string, string> = {
        pdf: 'application/pdf',
        docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        doc: 'application/msword',
        xls: 'application/vnd.ms-excel',
        csv: 'text/csv; charset=utf-8',
        txt: 'text/plain; charset=utf-8',
        mp3: 'audio/mpeg',
        mp4: 'video/mp4',
      };
      for (const [bytes, name, declared, extension] of cases) {
        const uploaded = await upload(widget, bytes, name, declared);
        expect(uploaded.status, name).to.equal(200);
        const sent = await widget.send({ media: { id: uploaded.body.data.media, description: name } });
        expect(sent.status, name).to.equal(200);
        const shown = (await widget.messages()).body.data[0] as ClientMessage;
        const media = shown.media as Record<string, string>;
        expect(media.filename, name).to.equal(`${uploaded.body.data.media}.${extension}`);
        expect(media.mimeType, name).to.equal(expectedType[extension]!.split(';')[0]);
        const file = await fetch(`${widget.baseUrl}/media/${media.year}/${media.month}/${media.day}/${media.filename}`, {
          headers: widget.headers(),
        });
        expect(file.status, name).to.equal(200);
        expect(file.headers.get('content-type'), name).to.equal(expectedType[extension]);
        expect(file.headers.get('content-disposition'), name)
          .to.match(/^attachment; filename=/)
          .and.include(name.split(' ')[0]);
        expect(file.headers.get('x-content-type-options')).to.equal('nosniff');
        expect(Buffer.from(await file.arrayBuffer()).equals(bytes), name).to.equal(true);
      }
      const requests = await t.receiver.waitFor(cases.length);
      // Every kind reaches the Service as the reference the specification gives images.
      for (const [i, [, , , extension]] of cases.entries()) {
        expect((requests[i]?.json as { message: string }).message).to.match(
          new RegExp(`^\\{\\{img/${t.account.id}/.+\\.${extension}\\}\\}$`),
        );
      }
    });

    it('refuses what the clients cannot render: WebP, a compound file not named as Office, binary text, an archive', async () => {
      for (const [bytes, name, declared] of [
        [WEBP, 'photo.webp', 'image/webp'],
        [COMPOUND_FILE, 'setup.msi', 'application/octet-stream'],
        [Buffer.from([0x68, 0x69, 0x00, 0x01, 0x02]), 'note.txt', 'text/plain'],
        [Buffer.from([0xc3, 0x28, 0x41]), 'latin.csv', 'text/csv'],
        [TEXT, 'script.sh', 'text/x-sh'],
        [Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(64)]), 'archive.zip', 'application/zip'],
      ] as Array<[Buffer, string, string]>) {
        const answer = await upload(widget, bytes, name, declared);
        expect(answer.status, name).to.equal(415);
        expect(answer.body.notifications[0]?.message, name).to.equal('invalid_media_type');
      }
    });

    it('caps each kind at its own size: a document may be larger than an image', async () => {
      // config/test.json: images 64 KiB, documents 128 KiB.
      const bigPdf = Buffer.concat([PDF, Buffer.alloc(100 * 1024, 0x20)]);
      expect((await upload(widget, bigPdf, 'big.pdf', 'application/pdf')).status).to.equal(200);
      const tooBigPdf = Buffer.concat([PDF, Buffer.alloc(130 * 1024, 0x20)]);
      const refused = await upload(widget, tooBigPdf, 'huge.pdf', 'application/pdf');
      expect(refused.status).to.equal(413);
      expect(refused.body.notifications[0]?.message).to.equal('media_too_large');
      const bigPng = await upload(widget, Buffer.concat([PNG, Buffer.alloc(100 * 1024)]), 'big.png');
      expect(bigPng.status).to.equal(413);
      expect(bigPng.body.notifications[0]?.message).to.equal('media_too_large');
    });

    it('lets the conversation’s Service download the upload by the reference it received, and no other Service', async () => {
      const uploaded = await upload(widget, PDF, 'contract.pdf', 'application/pdf');
      await widget.send({ media: { id: uploaded.body.data.media } });
      const [request] = await t.receiver.waitFor(1);
      const reference = /^\{\{img\/(.+)\}\}$/.exec((request?.json as { message: string }).message)?.[1];
      expect(reference).to.be.a('string');
      const get = (key: string, path = `/serviceApi/v2.3/media/${reference}`) =>
        fetch(`${widget.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });

      const file = await get(t.service.apiKey);
      expect(file.status).to.equal(200);
      expect(file.headers.get('content-type')).to.equal('application/pdf');
      expect(file.headers.get('content-disposition')).to.include('contract.pdf');
      expect(Buffer.from(await file.arrayBuffer()).equals(PDF)).to.equal(true);

      const other = await tenant();
      try {
        const foreign = await get(other.service.apiKey);
        expect(foreign.status).to.equal(404);
        expect(((await foreign.json()) as { notifications: Array<{ message: string }> }).notifications[0]?.message).to.equal(
          'media_not_found',
        );
        const elsewhere = await get(other.service.apiKey, `/serviceApi/v2.3/media/${reference!.replace(/^\d+/, String(other.account.id))}`);
        expect(elsewhere.status, 'the same path under its own account is no file of its').to.equal(404);
      } finally {
        await other.receiver.close();
      }
      expect((await get('not-a-key')).status).to.equal(401);
    });

    it('refuses a file over the size cap, a missing file and a non-multipart body', async () => {
      const big = Buffer.concat([PNG, Buffer.alloc(70 * 1024)]);
      const tooLarge = await upload(widget, big, 'big.png');
      expect(tooLarge.status).to.equal(413);
      expect(tooLarge.body.notifications[0]?.message).to.equal('media_too_large');

      const form = new FormData();
      form.append('other', 'value');
      const missing = await fetch(`${widget.baseUrl}/media`, { method: 'POST', headers: widget.headers(), body: form });
      expect(missing.status).to.equal(422);
      expect(((await missing.json()) as { notifications: Array<{ message: string }> }).notifications[0]?.message).to.equal('missing_media');

      const json = await widget.call('POST', '/media', { json: { media: 'x' } });
      expect(json.status).to.equal(415);
      expect(json.body.notifications[0]?.message).to.equal('multipart_required');
    });
  });
});

describe('Client API: write limits per device', function () {
  this.timeout(60_000);

  it('answers 429 with Retry-After once a device has used its writes, without slowing other devices', async () => {
    const server = await startTestServer({ client: { rateLimit: { points: 5, durationSeconds: 60 } } });
    try {
      const api = client(server.url);
      const token = (await api.post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN })).body.data.token;
      const account = (
        await api.post<{ id: number; identification: string; authorizationSecret: string; name: string }>('/adminApi/accounts', {
          token,
          json: { name: 'Limits' },
        })
      ).body.data;
      await api.post(`/adminApi/accounts/${account.id}/services`, { token, json: { name: 'S' } });
      const data = { ...account, defaultServiceId: null };
      const noisy = new Widget(data, undefined, undefined, '', server.url);
      const quiet = new Widget(data, undefined, undefined, '', server.url);
      expect((await noisy.register()).status).to.equal(200);
      expect((await quiet.register()).status).to.equal(200);

      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 8; i++) {
        const answer = await noisy.send(`flood ${i}`);
        statuses.push(answer.status);
        if (answer.status === 429) {
          retryAfter = answer.headers.get('retry-after');
          expect(answer.body.notifications[0]?.message).to.equal('too_many_requests');
        }
      }
      expect(statuses).to.deep.equal([200, 200, 200, 200, 429, 429, 429, 429]);
      expect(Number(retryAfter)).to.be.within(1, 60);
      expect((await quiet.send('still fine')).status).to.equal(200);
      const events = await noisy.call('POST', '/services/event/startTyping');
      expect(events.status, 'events count against the same device').to.equal(429);
      expect((await noisy.messages()).status, 'reading is not limited').to.equal(200);
    } finally {
      await server.stop();
    }
  });
});
