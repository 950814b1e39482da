// The stand-in Service endpoint must itself behave as told, or delivery tests prove nothing.
import { expect } from 'chai';
import { Receiver } from './support/receiver.ts';

describe('test harness: loopback receiver', () => {
  let receiver: Receiver;
  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  afterEach(() => receiver.close());

  const post = (body: unknown, signal?: AbortSignal) =>
    fetch(receiver.url + '/hook', { method: 'POST', body: JSON.stringify(body), headers: { 'x-test': '1' }, signal });

  it('records requests and answers queued replies in order, then the fallback', async () => {
    receiver.enqueue({ status: 500 }, { status: 429, headers: { 'retry-after': '7' } }).always({ status: 204 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post({ n: i })).status);
    expect(statuses).to.deep.equal([500, 429, 204]);
    const got = await receiver.waitFor(3);
    expect(got.map((r) => r.json)).to.deep.equal([{ n: 0 }, { n: 1 }, { n: 2 }]);
    expect(got[0]).to.include({ method: 'POST', path: '/hook' });
    expect(got[0]?.headers['x-test']).to.equal('1');
  });

  it('can hang, so that only the client timeout ends the request', async () => {
    receiver.enqueue({ hang: true });
    const outcome = await post({}, AbortSignal.timeout(300)).then(
      () => 'answered',
      (err: Error) => err.name,
    );
    expect(outcome).to.equal('TimeoutError');
    expect(receiver.requests).to.have.length(1);
  });

  it('rejects waitFor when too few requests arrive', async () => {
    const err = await receiver.waitFor(1, 50).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
  });

  it('exactly: fails on a request more that arrives before the settled point, passes on the exact count', async () => {
    await post({ n: 1 });
    // The extra request arrives after the first was counted but before the point after which
    // nothing more can come: waitFor(1) alone would pass.
    const settledAfterAnExtra = async () => void (await post({ n: 2 }));
    const err = await receiver.exactly(1, settledAfterAnExtra).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.match(/got 2 requests, expected exactly 1/);
    const got = await receiver.exactly(2, () => Promise.resolve());
    expect(got.map((r) => r.json)).to.deep.equal([{ n: 1 }, { n: 2 }]);
  });

  it('exactly: fails when too few requests arrive', async () => {
    let settledCalled = false;
    const settled = () => {
      settledCalled = true;
      return Promise.resolve();
    };
    const err = await receiver.exactly(1, settled, 50).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    expect(settledCalled, 'not even waiting for the settled point').to.equal(false);
  });
});
