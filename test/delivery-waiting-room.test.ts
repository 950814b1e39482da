// How many claimed deliveries a node keeps waiting for a bucket's slots (src/deliveries/waiting-room.ts):
// what the bucket started while the last claim ran, twice, so that its slots stay busy through
// the next claim; shrinking by half at most per claim when it slows down; never under its slots.
import { expect } from 'chai';
import { WaitingRoom } from '../src/deliveries/waiting-room.ts';

const SLOTS = 64;
const EMAIL_SLOTS = 16;
// Bucket 0 (emails) has fewer slots than a Service (bucket 7).
const room = () => new WaitingRoom((bucket) => (bucket === 0 ? EMAIL_SLOTS : SLOTS));

/** One claim during which each bucket started this many attempts. */
function claim(waiting: WaitingRoom, started: Record<number, number>): void {
  waiting.claimStarts();
  for (const [bucket, n] of Object.entries(started)) for (let i = 0; i < n; i++) waiting.attemptStarted(Number(bucket));
  waiting.claimEnded();
}

describe('delivery waiting room', () => {
  it('holds as many as a bucket has slots until a claim has run', () => {
    const waiting = room();
    expect(waiting.of(7)).to.equal(SLOTS);
    expect(waiting.of(0)).to.equal(EMAIL_SLOTS);
  });

  it('grows to twice what a bucket started while the last claim ran', () => {
    const waiting = room();
    claim(waiting, { 7: 120, 0: 3 });
    expect(waiting.of(7)).to.equal(240);
    expect(waiting.of(0), 'never under its slots').to.equal(EMAIL_SLOTS);
  });

  it('counts only what starts while a claim runs', () => {
    const waiting = room();
    // Between claims (the worker asleep, hand-offs sending): not a claim's round trip.
    for (let i = 0; i < 500; i++) waiting.attemptStarted(7);
    claim(waiting, { 7: 20 });
    expect(waiting.of(7)).to.equal(SLOTS);
  });

  it('halves at most per claim when the bucket slows down, down to its slots', () => {
    const waiting = room();
    claim(waiting, { 7: 200 });
    expect(waiting.of(7)).to.equal(400);
    const rooms: number[] = [];
    for (let i = 0; i < 4; i++) {
      claim(waiting, {});
      rooms.push(waiting.of(7));
    }
    expect(rooms).to.deep.equal([200, 100, SLOTS, SLOTS]);
  });
});
