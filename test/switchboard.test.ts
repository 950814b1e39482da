// Several Services on one conversation (docs/service-api.md, "The switchboard"): a bot, an
// agent desk and an observer on standby, real receivers on loopback. A customer conversation
// runs bot → offer → accept → desk → release → bot; each Service receives exactly what it
// should, in order. Refused steps answer their code and deliver a failure event to the caller.
// The same conversation runs on two server processes sharing PostgreSQL and Redis.
import { expect } from 'chai';
import { adminToken } from './support/factories.ts';
import { createTestDatabase, mode, type TestDatabase } from './support/database.ts';
import { client } from './support/http.ts';
import { expectOutbox, outboxRows } from './support/outbox.ts';
import { nodeEnv, startProcess, type ServerProcess } from './support/process.ts';
import { freePort, TestRedis } from './support/redis.ts';
import { sharedServer } from './support/server.ts';
import { nodesCluster, ref, sharedCluster, Switchboard, type Cluster, type Party } from './support/switchboard.ts';

type Json = Record<string, unknown>;

/** A message payload as the spec has it, without its id and time (checked apart). */
function message(board: Switchboard, text: string) {
  return {
    type: 'message',
    message: text,
    typeId: 1,
    accountIdentification: board.account.identification,
    accountId: board.account.id,
    user: { id: String(board.userId), uniqueIdentifier: null, additionalInformation: null },
  };
}

function withoutIdAndTime(payload: unknown): Json {
  const { id, time, ...rest } = payload as Json;
  expect(id, 'a message id').to.be.a('number');
  expect(String(time), 'a ten-digit time').to.have.length(10);
  return rest;
}

/** An action payload (owner, handover) as the spec has it: its body, for the board's account and user. */
function action(board: Switchboard, type: 'owner' | 'handover', body: Json) {
  return {
    type,
    accountIdentification: board.account.identification,
    user: { id: board.userId, uniqueIdentifier: null, additionalInformation: null },
    body,
  };
}

function changeOwner(board: Switchboard, from: Party, to: Party, by: Party, metadata: string) {
  const isDefault = (party: Party) => party === board.bot;
  return action(board, 'owner', {
    action: 'changeOwner',
    metadata,
    oldOwner: ref(from, isDefault(from)),
    newOwner: ref(to, isDefault(to)),
    initiatedBy: ref(by, isDefault(by)),
  });
}

function failure(board: Switchboard, by: Party, step: string, code: string, note: { reason?: string; metadata?: Json } = {}) {
  return action(board, 'handover', {
    action: 'failure',
    step,
    reason: note.reason ?? null,
    metadata: note.metadata ?? null,
    code,
    initiatedBy: ref(by, by === board.bot),
  });
}

const standby = (payload: unknown) => ({ ...(payload as Json), standby: true });

/** The whole conversation, bot → offer → accept → desk → release → bot, checked payload for payload. */
async function conversation(cluster: Cluster): Promise<void> {
  await Switchboard.run(cluster, async (board) => {
    const { bot, desk, observer } = board;
    const users = `/users/${board.userId}`;

    await board.say('Hi, I was charged twice');
    // The observer reads, but may not answer while it does not hold control.
    const refused = await board.as(observer).post(`${users}/messages`, { message: 'I am the observer', agent: { id: 9, name: 'QA' } });
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.notifications[0]?.message).to.equal('not_in_control');
    const refusedTyping = await board.as(observer).post(`${users}/typing`, { isTyping: true, agent: { id: 9, name: 'QA' } });
    expect(refusedTyping.status).to.equal(409);
    expect(refusedTyping.body.notifications[0]?.message).to.equal('not_in_control');
    const answered = await board.as(bot).post(`${users}/messages`, { message: 'Let me find someone', agent: { id: 1, name: 'Bot' } });
    expect(answered.status, answered.text).to.equal(201);

    const offered = await board.as(bot).post<{ changed: boolean; handover: Json }>(`${users}/handover/offer`, {
      serviceIdentification: desk.service.identification,
      reason: 'billing question',
      metadata: { queue: 'billing', priority: 2 },
    });
    expect(offered.status, offered.text).to.equal(200);
    expect(offered.body.data.changed).to.equal(true);
    const { pending } = offered.body.data.handover as { pending: { identification: string; expiresAt: string } };
    expect(pending.identification).to.equal(desk.service.identification);
    expect(offered.body.data.handover).to.deep.include({ active: ref(bot, true), standby: [ref(observer)] });
    // The same offer again is already made: nothing more is delivered.
    const again = await board.as(bot).post<{ changed: boolean }>(`${users}/handover/offer`, {
      serviceIdentification: desk.service.identification,
      reason: 'billing question',
    });
    expect(again.body.data.changed).to.equal(false);

    const accepted = await board.as(desk).post<{ changed: boolean; owner: Json }>(`${users}/handover/accept`, { reason: 'taking it' });
    expect(accepted.status, accepted.text).to.equal(200);
    expect(accepted.body.data).to.deep.include({ changed: true, owner: ref(desk) });
    const acceptedAgain = await board.as(desk).post<{ changed: boolean }>(`${users}/handover/accept`, { reason: 'taking it' });
    expect(acceptedAgain.body.data.changed, 'a repeated accept').to.equal(false);

    await board.say('It was order 1042');
    const deskAnswer = await board.as(desk).post(`${users}/messages`, { message: 'Refunded', agent: { id: 5, name: 'Ann' } });
    expect(deskAnswer.status).to.equal(201);

    const released = await board.as(desk).post<{ changed: boolean; owner: Json; handover: Json }>(`${users}/handover/release`, {
      reason: 'resolved',
      metadata: { ticket: 42 },
    });
    expect(released.status, released.text).to.equal(200);
    expect(released.body.data).to.deep.include({ changed: true, owner: ref(bot, true) });
    expect(released.body.data.handover).to.deep.equal({ active: ref(bot, true), pending: null, standby: [ref(observer)] });
    const releasedAgain = await board.as(desk).post<{ changed: boolean }>(`${users}/handover/release`, { reason: 'resolved' });
    expect(releasedAgain.status, 'a repeated release (a lost answer) is answered as done').to.equal(200);
    expect(releasedAgain.body.data.changed).to.equal(false);

    await board.say('Thanks!');

    const offer = action(board, 'handover', {
      action: 'offerControl',
      step: 'offer',
      reason: 'billing question',
      metadata: { queue: 'billing', priority: 2 },
      from: ref(bot, true),
      to: ref(desk),
      expiresAt: pending.expiresAt,
      initiatedBy: ref(bot, true),
    });
    const accept = changeOwner(board, bot, desk, desk, JSON.stringify({ step: 'accept', reason: 'taking it', metadata: null }));
    const release = changeOwner(board, desk, bot, desk, JSON.stringify({ step: 'release', reason: 'resolved', metadata: { ticket: 42 } }));

    const toBot = await board.received(bot, 5);
    expect(withoutIdAndTime(toBot[0])).to.deep.equal(message(board, 'Hi, I was charged twice'));
    expect(toBot.slice(1, 4)).to.deep.equal([offer, accept, release]);
    expect(withoutIdAndTime(toBot[4])).to.deep.equal(message(board, 'Thanks!'));

    const toDesk = await board.received(desk, 4);
    expect([toDesk[0], toDesk[1], toDesk[3]]).to.deep.equal([offer, accept, release]);
    expect(withoutIdAndTime(toDesk[2])).to.deep.equal(message(board, 'It was order 1042'));

    // The observer sees every payload of the conversation, marked, in the same order.
    const toObserver = await board.received(observer, 6);
    expect(toObserver).to.deep.equal([toBot[0], offer, accept, toDesk[2], release, toBot[4]].map(standby));
  });
}

describe('switchboard: several Services on one conversation', function () {
  this.timeout(60_000);
  let cluster: Cluster;

  before(async () => {
    cluster = sharedCluster(await adminToken());
  });

  it('runs bot → offer → accept → desk → release → bot, each Service receiving exactly its payloads', async () => {
    await conversation(cluster);
  });

  it('refuses steps that do not hold with a code, and delivers a failure event to the caller', async () => {
    await Switchboard.run(cluster, async (board) => {
      const { bot, desk, observer } = board;
      const users = `/users/${board.userId}`;
      const spare = await client(board.next()).post<{ id: number; identification: string }>(
        `/adminApi/accounts/${board.account.id}/services`,
        { token: cluster.token, json: { name: 'Spare', webhookUrl: null } },
      );
      await board.admin('PATCH', `/adminApi/services/${spare.body.data.id}`, { enabled: false });
      const inbox = (await board.admin<{ inbox: { identification: string } }>('GET', `/adminApi/accounts/${board.account.id}`)).body.data
        .inbox;

      const step = async (party: Party, name: string, body: Json, status: number, code: string) => {
        const answer = await board.as(party).post(`${users}/handover/${name}`, body);
        expect(answer.status, `${name} by ${party.service.name}: ${answer.text}`).to.equal(status);
        expect(answer.body.notifications[0]?.message).to.equal(code);
      };
      await step(observer, 'accept', { reason: 'me!' }, 409, 'not_pending');
      await step(desk, 'pass', { serviceIdentification: observer.service.identification }, 409, 'not_in_control');
      await step(desk, 'release', {}, 409, 'not_in_control');
      await step(bot, 'offer', { serviceIdentification: spare.body.data.identification }, 409, 'target_disabled');
      await step(bot, 'offer', { serviceIdentification: bot.service.identification }, 409, 'target_is_owner');
      await step(bot, 'offer', { serviceIdentification: inbox.identification }, 409, 'target_cannot_accept');
      await step(bot, 'pass', { metadata: { why: 'no next' } }, 409, 'no_next_service');
      await step(bot, 'pass', { serviceIdentification: 'nope' }, 404, 'service_not_found');
      // The caller's mistakes in the body are validation failures: no failure event.
      await step(
        bot,
        'offer',
        { serviceIdentification: desk.service.identification, metadata: { big: 'x'.repeat(5000) } },
        422,
        'validation_failed',
      );
      await step(bot, 'offer', { serviceIdentification: desk.service.identification, timeoutSeconds: 1 }, 422, 'validation_failed');
      await step(bot, 'offer', { serviceIdentification: desk.service.identification, target: 'typo' }, 422, 'validation_failed');

      // An offer that timed out cannot be accepted.
      const offered = await board.as(bot).post(`${users}/handover/offer`, { serviceIdentification: desk.service.identification });
      expect(offered.status, offered.text).to.equal(200);
      await cluster.execute(`update conversation_handovers set offer_expires_at = now() - interval '1 second' where user_id = ?`, [
        board.userId,
      ]);
      // The worker's sweep tells both Services, once: two sweeps run after this (nextClaim() sweeps first).
      await sharedServer().deps.deliveries?.nextClaim();
      await sharedServer().deps.deliveries?.nextClaim();
      await step(desk, 'accept', {}, 409, 'offer_expired');
      const state = await board.as(bot).get<{ handover: Json }>(`${users}/handover`);
      expect(state.body.data.handover).to.deep.equal({ active: ref(bot, true), pending: null, standby: [ref(observer)] });

      const toBot = await board.received(bot, 7);
      const offer = toBot[5] as { body: Json };
      expect(offer.body.action).to.equal('offerControl');
      // The offer's fields, with when it ran out (this test moved it back).
      const endedAt = String((toBot[6] as { body: Json }).body.expiresAt);
      expect(Date.parse(endedAt)).to.be.below(Date.parse(String(offer.body.expiresAt)));
      const expired = { ...offer, body: { ...offer.body, action: 'offerExpired', expiresAt: endedAt } };
      expect(toBot[6], 'offerExpired: the offer, ended').to.deep.equal(expired);
      expect(toBot.slice(0, 5)).to.deep.equal([
        failure(board, bot, 'offer', 'target_disabled'),
        failure(board, bot, 'offer', 'target_is_owner'),
        failure(board, bot, 'offer', 'target_cannot_accept'),
        failure(board, bot, 'pass', 'no_next_service', { metadata: { why: 'no next' } }),
        failure(board, bot, 'pass', 'service_not_found'),
      ]);
      expect(await board.received(desk, 5)).to.deep.equal([
        failure(board, desk, 'pass', 'not_in_control'),
        failure(board, desk, 'release', 'not_in_control'),
        offer,
        expired,
        failure(board, desk, 'accept', 'offer_expired'),
      ]);
      expect(await board.received(observer, 3)).to.deep.equal([
        failure(board, observer, 'accept', 'not_pending', { reason: 'me!' }),
        standby(offer),
        standby(expired),
      ]);
      const told = await outboxRows({ serviceId: desk.service.id, userId: board.userId });
      expect(told.filter((row) => (row.payload as { body: Json }).body.action === 'offerExpired')).to.have.length(1);
    });
  });

  it('switching the active Service off hands its conversations to the next one, with the payloads', async () => {
    await Switchboard.run(cluster, async (board) => {
      const { bot, desk, observer } = board;
      const users = `/users/${board.userId}`;
      const passed = await board.as(bot).post(`${users}/handover/pass`, { serviceIdentification: desk.service.identification });
      expect(passed.status, passed.text).to.equal(200);
      const off = await board.admin('PATCH', `/adminApi/services/${desk.service.id}`, { enabled: false });
      expect(off.status, off.text).to.equal(200);
      const pass = changeOwner(board, bot, desk, bot, JSON.stringify({ step: 'pass', reason: null, metadata: null }));
      const handedBack = changeOwner(
        board,
        desk,
        bot,
        desk,
        JSON.stringify({ step: 'release', reason: 'service_disabled', metadata: null }),
      );
      expect(await board.received(bot, 2)).to.deep.equal([pass, handedBack]);
      expect(await board.received(observer, 2)).to.deep.equal([pass, handedBack].map(standby));
      // The desk's copies wait, in order, until an operator switches it on again.
      await expectOutbox({ serviceId: desk.service.id }, 2, "the switched-off desk's deliveries");
      await board.say('anyone there?');
      expect(withoutIdAndTime((await board.received(bot, 3))[2])).to.deep.equal(message(board, 'anyone there?'));
    });
  });

  it('a Service its webhook switched off (410) hands its conversations to its next one, with the payloads', async () => {
    await Switchboard.run(cluster, async (board) => {
      const { bot, desk, observer } = board;
      const next = await board.admin('PATCH', `/adminApi/services/${bot.service.id}`, { handoverNext: desk.service.identification });
      expect(next.status, next.text).to.equal(200);
      bot.receiver.always({ status: 410 });
      await board.say('hello?');
      const handedOn = changeOwner(board, bot, desk, bot, JSON.stringify({ step: 'release', reason: 'service_disabled', metadata: null }));
      // The desk gets the changeOwner and nothing else; the observer its copies, in order.
      expect(await board.received(desk, 1)).to.deep.equal([handedOn]);
      const toObserver = await board.received(observer, 2);
      expect(withoutIdAndTime(toObserver[0])).to.deep.equal({ ...message(board, 'hello?'), standby: true });
      expect(toObserver[1]).to.deep.equal(standby(handedOn));
      const state = await board.as(desk).get<{ handover: Json }>(`/users/${board.userId}/handover`);
      expect(state.body.data.handover).to.deep.equal({ active: ref(desk), pending: null, standby: [ref(observer)] });
      // The gone bot's message and its changeOwner wait, in order, until an operator switches it on.
      const botRows = await outboxRows({ serviceId: bot.service.id });
      expect(botRows.map((row) => [row.kind, row.state, (row.payload as Json).type])).to.deep.equal([
        ['message', 'pending', 'message'],
        ['action', 'pending', 'owner'],
      ]);
      expect(botRows[1]?.payload).to.deep.equal(handedOn);
      const overview = await board.admin<{ services: Array<{ id: number; disabledReason: string | null }> }>(
        'GET',
        `/adminApi/accounts/${board.account.id}`,
      );
      expect(overview.body.data.services.find((service) => service.id === bot.service.id)?.disabledReason).to.equal('webhook_gone');
    });
  });

  it("a Service's webhook gets only the kinds it wants; 'participated' hears only conversations it owned", async () => {
    await Switchboard.run(cluster, async (board) => {
      const { bot, desk, observer } = board;
      const users = `/users/${board.userId}`;
      expect((await board.admin('PATCH', `/adminApi/services/${observer.service.id}`, { webhookKinds: ['messages'] })).status).to.equal(
        200,
      );
      const patched = await board.admin<Json>('PATCH', `/adminApi/services/${desk.service.id}`, { standby: 'participated' });
      expect(patched.body.data).to.deep.include({ standby: 'participated', webhookKinds: ['messages', 'events', 'actions'] });
      const typing = await board.widget.call('POST', '/services/event/ChatOpened');
      expect(typing.status).to.equal(200);
      await board.say('one');
      // The desk listens on standby but never took part: nothing yet.
      await expectOutbox({ serviceId: desk.service.id }, 0, 'the desk before it took part');
      await board.as(bot).post(`${users}/handover/pass`, { serviceIdentification: desk.service.identification });
      await board.as(desk).post(`${users}/handover/release`, {});
      await board.say('two');

      const toBot = await board.received(bot, 5);
      expect((toBot[0] as { type: string }).type).to.equal('event');
      const toDesk = await board.received(desk, 3);
      expect(toDesk.slice(0, 2)).to.deep.equal([toBot[2], toBot[3]]);
      expect(toDesk[2]).to.deep.equal(standby(toBot[4]));
      expect(await board.received(observer, 2)).to.deep.equal([standby(toBot[1]), standby(toBot[4])]);
    });
  });
});

const runsOnNodes = mode === 'postgresql';

(runsOnNodes ? describe : describe.skip)(
  `switchboard on two nodes${runsOnNodes ? '' : ' (skipped: needs TEST_DATABASE_URL and redis-server)'}`,
  function () {
    this.timeout(120_000);
    const ADMIN = { email: 'switchboard-nodes@palaver.test', password: 'two nodes password' };
    let database: TestDatabase;
    let redis: TestRedis;
    let nodes: ServerProcess[] = [];

    before(async () => {
      database = await createTestDatabase('switchboard_nodes');
      redis = new TestRedis(await freePort());
      await redis.start();
      const env = {
        ...nodeEnv(database, redis.url, ADMIN),
        PALAVER_WEBHOOK_ALLOW_PRIVATE: 'true',
      };
      nodes = [await startProcess(env), await startProcess(env)];
    });

    after(async () => {
      await Promise.all(nodes.map((node) => node.stop('SIGTERM')));
      await redis?.stop();
      await database?.drop();
    });

    it('runs the same conversation with every call on the next node', async () => {
      const urls = nodes.map((node) => node.url);
      const token = (await client(urls[0] as string).post<{ token: string }>('/adminApi/login', { json: ADMIN })).body.data.token;
      await conversation(nodesCluster(urls, token, database.databaseUrl as string));
    });
  },
);
