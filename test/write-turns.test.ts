// Who takes the database next when the group-committed writers wait for it
// (src/db/tx/turns.ts): work already accepted (agents' answers, delivery outcomes) before new
// customer messages, but a customers' batch never waits longer than the bound.
import { expect } from 'chai';
import { MessageSchema } from '../src/db/entities/index.ts';
import { Turns, turnsOf } from '../src/db/tx/turns.ts';
import { client } from './support/http.ts';
import { sharedServer } from './support/server.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

/** Which of the started writes have started, in order. */
function recorder() {
  const started: string[] = [];
  const giveBacks = new Map<string, () => void>();
  return {
    started,
    take(turns: Turns, kind: 'accepted' | 'new', name: string) {
      void turns.take(kind).then((giveBack) => {
        started.push(name);
        giveBacks.set(name, giveBack);
      });
    },
    giveBack(name: string) {
      giveBacks.get(name)?.();
    },
  };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('turns at the database for the writers', function () {
  this.timeout(60_000);

  it('gives a turn at once while one is free', async () => {
    const turns = new Turns(2);
    const r = recorder();
    r.take(turns, 'new', 'customers');
    r.take(turns, 'accepted', 'answers');
    await settled();
    expect(r.started).to.deep.equal(['customers', 'answers']);
    expect(turns.waiting).to.deep.equal({ accepted: 0, new: 0 });
  });

  it('passes a turn given back to accepted work before new messages that waited longer', async () => {
    const turns = new Turns(1);
    const r = recorder();
    r.take(turns, 'accepted', 'first');
    await settled();
    r.take(turns, 'new', 'customers');
    r.take(turns, 'accepted', 'answers');
    r.take(turns, 'accepted', 'outcomes');
    await settled();
    expect(turns.waiting).to.deep.equal({ accepted: 2, new: 1 });
    r.giveBack('first');
    await settled();
    r.giveBack('answers');
    await settled();
    r.giveBack('outcomes');
    await settled();
    expect(r.started).to.deep.equal(['first', 'answers', 'outcomes', 'customers']);
    r.giveBack('customers');
    r.take(turns, 'new', 'again');
    await settled();
    expect(r.started.at(-1), 'the turn was freed, and taken at once').to.equal('again');
  });

  it('lets new messages go first once they have waited the bound', async () => {
    let now = 0;
    const turns = new Turns(1, 1000, () => now);
    const r = recorder();
    r.take(turns, 'accepted', 'first');
    await settled();
    r.take(turns, 'new', 'customers');
    r.take(turns, 'accepted', 'answers');
    await settled();
    now = 999;
    r.giveBack('first');
    await settled();
    expect(r.started.at(-1)).to.equal('answers');
    r.take(turns, 'accepted', 'more answers');
    await settled();
    now = 1000;
    r.giveBack('answers');
    await settled();
    expect(r.started.at(-1), 'waited 1,000 ms: next, whatever waits').to.equal('customers');
    expect(turns.waiting).to.deep.equal({ accepted: 1, new: 0 });
  });

  describe('on a node', () => {
    let t: Tenant;
    beforeEach(async () => {
      t = await tenant();
    });
    afterEach(() => t.receiver.close());

    it('writes an agent’s answer before a customer message that reached the database first, once both wait', async () => {
      const em = sharedServer().deps.db.orm.em;
      const turns = turnsOf(em);
      const widget = new Widget(t.account);
      const userId = (await widget.register()).body.data.userId;
      const api = client(sharedServer().url);

      // Every turn taken (one on the embedded database, the pool's ten on PostgreSQL): the
      // writers' next batches wait, as they do behind one another past a node's throughput.
      const held = await Promise.all(
        Array.from({ length: (em.getConnection().getKnex().client as { pool: { max: number } }).pool.max }, () => turns.take('accepted')),
      );
      try {
        const customer = widget.send({ message: 'from the customer' });
        await until(() => turns.waiting.new === 1);
        const answer = api.post(`/users/${userId}/messages`, {
          token: t.service.apiKey,
          json: { message: 'from the agent', agent: { id: 1, name: 'Ada' } },
        });
        await until(() => turns.waiting.accepted >= 1);
        expect(await em.fork().count(MessageSchema, { userId }), 'nothing written while every turn is held').to.equal(0);
        // One turn given back: the answer goes first, then it passes its turn on to the customer's message.
        held.pop()?.();
        expect((await answer).status).to.equal(201);
        for (const giveBack of held.splice(0)) giveBack();
        expect((await customer).status).to.equal(200);
      } finally {
        for (const giveBack of held) giveBack();
      }
      const rows = await em.fork().find(MessageSchema, { userId }, { orderBy: { id: 'asc' } });
      expect(rows.map((m) => m.message)).to.deep.equal(['from the agent', 'from the customer']);
    });
  });
});

async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 5) {
    if (waited > 10_000) throw new Error('never came to pass');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
