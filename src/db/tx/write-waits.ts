// How long one writer's callers wait now, from handing a write in to its answer: the agents'
// writer's, for the admission's answers_waiting sign (http/admission.ts). The mean over the
// writes answered in the last second, in four buckets of 250 ms that age out as time passes
// (no timer: each read and each write looks at the clock). A write still open after a second
// counts too, by its age, so that writes stuck behind a full node raise the sign before any of
// them is answered.

import { performance } from 'node:perf_hooks';
import { OpenWaits } from '../open-waits.ts';

const BUCKET_MS = 250;
/** Buckets in the window (a second). */
const WINDOW = 4;

interface Bucket {
  /** floor(time / BUCKET_MS) of the writes it holds. */
  slot: number;
  totalMs: number;
  count: number;
}

export class WriteWaits {
  private readonly buckets: Bucket[] = Array.from({ length: WINDOW }, () => ({ slot: -1, totalMs: 0, count: 0 }));
  /** Writes handed in and not yet answered. */
  private readonly open = new OpenWaits();
  private next = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A write handed in; the returned function is called once it is answered (written or refused). */
  begin(): () => void {
    const id = this.next++;
    this.open.began(id, this.now());
    return () => {
      const began = this.open.ended(id);
      if (began === undefined) return;
      const ended = this.now();
      const slot = Math.floor(ended / BUCKET_MS);
      const bucket = this.buckets[slot % WINDOW] as Bucket;
      if (bucket.slot !== slot) Object.assign(bucket, { slot, totalMs: 0, count: 0 });
      bucket.totalMs += ended - began;
      bucket.count += 1;
    };
  }

  /** The wait now, in ms: the mean of the last second's answered writes, or an open write's age past a second. */
  waitMs(): number {
    const now = this.now();
    const current = Math.floor(now / BUCKET_MS);
    let totalMs = 0;
    let count = 0;
    for (const bucket of this.buckets) {
      if (bucket.slot <= current - WINDOW) continue;
      totalMs += bucket.totalMs;
      count += bucket.count;
    }
    const mean = count > 0 ? totalMs / count : 0;
    const age = this.open.oldestAgeMs(now);
    return age > WINDOW * BUCKET_MS ? Math.max(mean, age) : mean;
  }
}
