// What a customer was told is sent survives the server's process being killed. A message is
// answered only once its transaction committed (db/tx/group-commit.ts), and a commit has then
// reached the operating system's files, on PostgreSQL and on the embedded database alike (PGlite
// writes its WAL at every commit, though it does not fsync it: docs/operations.md, Two ways to run).
// Killed with SIGKILL right after the last answer and started again on the same data, the node
// has every acknowledged message, once, and the Service receives each one's webhook.
import { expect } from 'chai';
import { createAccount } from '../src/tenancy/accounts.ts';
import { createService } from '../src/tenancy/services.ts';
import { mode } from './support/database.ts';
import { withDatabase } from './support/populate.ts';
import { processFixture } from './support/process.ts';
import { Receiver } from './support/receiver.ts';
import { Widget } from './support/widget.ts';
import type { AccountData } from './support/factories.ts';

const CUSTOMERS = 4;
const MESSAGES_EACH = 12;

describe('acknowledged messages across a SIGKILL', function () {
  this.timeout(180_000);
  // Registered first, so that its processes are killed before the receiver closes.
  const proc = processFixture('acknowledged');
  let receiver: Receiver;

  beforeEach(async () => {
    receiver = await Receiver.start();
  });

  afterEach(async () => {
    await receiver.close();
  });

  it(`keeps every acknowledged message and delivers its webhook after a SIGKILL (${mode})`, async () => {
    const account: AccountData = await withDatabase(proc.database, async (em) => {
      const created = await createAccount(em, { name: 'Kill test' });
      await createService(em, created.id, { name: 'Receiver', webhookUrl: `${receiver.url}/hook` });
      return { ...created, defaultServiceId: created.defaultServiceId ?? null };
    });
    // Webhooks answered slowly, so that some are still in the outbox when the process dies.
    receiver.always({ status: 200, delayMs: 200 });

    const first = await proc.start();
    const widgets = Array.from({ length: CUSTOMERS }, () => new Widget(account, undefined, undefined, '', first.url));
    for (const widget of widgets) {
      const registered = await widget.register();
      expect(registered.status, registered.text).to.equal(200);
    }
    // The customers send at once, so that the node writes their messages in shared group commits.
    const acknowledged = await Promise.all(
      widgets.map(async (widget, c) => {
        const ids: number[] = [];
        for (let n = 1; n <= MESSAGES_EACH; n++) {
          const sent = await widget.send(`customer ${c} message ${n}`);
          expect(sent.status, sent.text).to.equal(200);
          ids.push(Number(sent.body.data.messageId));
        }
        return ids;
      }),
    );
    const killed = await first.stop('SIGKILL');
    expect(killed.signal).to.equal('SIGKILL');
    const webhooksBeforeKill = receiver.requests.length;

    const second = await proc.start();
    for (const [c, widget] of widgets.entries()) {
      const answer = await new Widget(account, widget.deviceId, undefined, '', second.url).messages();
      expect(answer.status, answer.text).to.equal(200);
      const kept = answer.body.data.filter((m) => m.typeId === 1);
      expect(kept.map((m) => m.id).sort((a, b) => a - b)).to.deep.equal(acknowledged[c]);
      expect(kept.map((m) => m.message).sort()).to.deep.equal(
        Array.from({ length: MESSAGES_EACH }, (_, i) => `customer ${c} message ${i + 1}`).sort(),
      );
    }

    // Every acknowledged message's webhook arrives, those sent before the kill or after the restart.
    const all = acknowledged.flat();
    const deadline = Date.now() + 60_000;
    const delivered = () =>
      new Set(
        receiver.requests.flatMap((r) => {
          const body = r.json as { type?: string; id?: number };
          return body.type === 'message' ? [Number(body.id)] : [];
        }),
      );
    while (delivered().size < all.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect([...delivered()].sort((a, b) => a - b)).to.deep.equal([...all].sort((a, b) => a - b));
    expect(webhooksBeforeKill, 'the kill came before every webhook was sent').to.be.lessThan(all.length);
  });
});
