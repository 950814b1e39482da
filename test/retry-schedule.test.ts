// When a failed delivery is tried again (src/deliveries/schedule.ts): the configured wait
// with ±20% jitter, never sooner than the receiver's Retry-After, and no attempt once the
// schedule is used up. The random source is passed in, so every bound is exact and nothing sleeps.
import { expect } from 'chai';
import { loadConfig } from '../src/config.ts';
import { nextDelayMs } from '../src/deliveries/schedule.ts';

// Seconds before each attempt: the first at once, then the waits between retries (as configured).
const schedule = [0, 5, 300, 1800] as const;
const lowest = () => 0;
const middle = () => 0.5;
// Just below 1: as high as Math.random goes.
const highest = () => 1 - Number.EPSILON;

describe('retry schedule', () => {
  it('retries within seconds in development (a bot started just after the first message), on the long schedule in production', () => {
    const development = loadConfig({ env: { NODE_ENV: 'development' } }).webhooks.retrySchedule;
    // The first retries of a message written before `npm run demo-bot` ran: seconds, not 5 minutes.
    expect(development.slice(0, 4)).to.deep.equal([0, 2, 5, 15]);
    expect(
      development.slice(1, 4).reduce((a, b) => a + b),
      'three retries within half a minute',
    ).to.be.at.most(30);
    expect(development, 'and still hours in all').to.have.length(8);
    const production = loadConfig({ env: { NODE_ENV: 'production', DATABASE_URL: 'postgresql://u@db/palaver' } }).webhooks.retrySchedule;
    expect(production).to.deep.equal([0, 5, 300, 1800, 7200, 18000, 36000, 36000]);
  });

  describe('jitter', () => {
    it('waits the scheduled time after each attempt, by the number of attempts made', () => {
      expect(nextDelayMs(1, schedule, null, middle)).to.equal(5_000);
      expect(nextDelayMs(2, schedule, null, middle)).to.equal(300_000);
      expect(nextDelayMs(3, schedule, null, middle)).to.equal(1_800_000);
    });

    it('stays within 20% either side of the scheduled wait, reaching both ends', () => {
      expect(nextDelayMs(1, schedule, null, lowest)).to.equal(4_000);
      expect(nextDelayMs(1, schedule, null, highest)).to.equal(6_000);
      expect(nextDelayMs(2, schedule, null, lowest)).to.equal(240_000);
      expect(nextDelayMs(2, schedule, null, highest)).to.equal(360_000);
      expect(nextDelayMs(1, schedule, null, () => 0.25)).to.equal(4_500);
      expect(nextDelayMs(1, schedule, null, () => 0.75)).to.equal(5_500);
    });

    it('moves linearly with the random value between the ends', () => {
      let previous = -Infinity;
      for (let i = 0; i <= 200; i++) {
        const r = Math.min(i / 200, 1 - Number.EPSILON);
        const delay = nextDelayMs(2, schedule, null, () => r)!;
        expect(delay).to.be.within(240_000, 360_000);
        expect(delay).to.equal(Math.round(300_000 * (0.8 + 0.4 * r)));
        expect(delay).to.be.at.least(previous);
        previous = delay;
      }
    });

    it('rounds to whole milliseconds (fractions of a second in the schedule)', () => {
      // 200 ms × (0.8 + 0.4 × 0.123) = 169.84 ms.
      expect(nextDelayMs(1, [0, 0.2], null, () => 0.123)).to.equal(170);
      expect(nextDelayMs(1, [0, 0.5], null, lowest)).to.equal(400);
      expect(nextDelayMs(1, [0, 0.5], null, highest)).to.equal(600);
    });

    it('uses Math.random by default, within the same bounds', () => {
      const delays = Array.from({ length: 500 }, () => nextDelayMs(1, schedule, null)!);
      for (const delay of delays) {
        expect(Number.isInteger(delay)).to.equal(true);
        expect(delay).to.be.within(4_000, 6_000);
      }
      // Jitter: not every retry of every delivery at the same moment.
      expect(new Set(delays).size).to.be.greaterThan(1);
    });

    it('has no jitter on a wait of zero', () => {
      expect(nextDelayMs(1, [0, 0], null, highest)).to.equal(0);
    });
  });

  describe('Retry-After', () => {
    it('waits as long as the receiver asked when that is longer than the jittered wait', () => {
      expect(nextDelayMs(1, schedule, 60_000, highest)).to.equal(60_000);
      // Just above the highest jittered wait.
      expect(nextDelayMs(1, schedule, 6_001, highest)).to.equal(6_001);
    });

    it('keeps the jittered wait when the receiver asked for less', () => {
      expect(nextDelayMs(1, schedule, 1_000, lowest)).to.equal(4_000);
      expect(nextDelayMs(1, schedule, 3_999, lowest)).to.equal(4_000);
      expect(nextDelayMs(2, schedule, 0, middle)).to.equal(300_000);
    });

    it('is the jittered wait exactly when both are equal', () => {
      expect(nextDelayMs(1, schedule, 4_000, lowest)).to.equal(4_000);
    });
  });

  describe('exhaustion', () => {
    it('has no next attempt once every scheduled attempt was made', () => {
      expect(nextDelayMs(schedule.length, schedule, null, middle)).to.equal(null);
      expect(nextDelayMs(schedule.length + 3, schedule, null, middle)).to.equal(null);
    });

    it('does not give an attempt back for a Retry-After', () => {
      expect(nextDelayMs(schedule.length, schedule, 1_000, middle)).to.equal(null);
    });

    it('makes exactly as many attempts as the schedule has entries', () => {
      // Attempts are counted including the one just made (claims.ts, ClaimedDelivery.attempts).
      let attempts = 1;
      while (nextDelayMs(attempts, schedule, null, middle) !== null) attempts += 1;
      expect(attempts).to.equal(schedule.length);
    });

    it('gives up after the first attempt when the schedule has only that one', () => {
      expect(nextDelayMs(1, [0], null, middle)).to.equal(null);
    });
  });
});
