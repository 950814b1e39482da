// The share of time this node's event loop was busy over the last second: one of the two signs,
// with the delivery worker behind, that the node's CPU is past what it can deliver
// (http/admission.ts). Sampled from performance.eventLoopUtilization() on a timer that does not
// keep the process alive; reading it costs nothing.

import { performance, type EventLoopUtilization } from 'node:perf_hooks';

const SAMPLE_MS = 250;
/** Samples in the window (a second). */
const WINDOW = 4;

export class EventLoopBusy {
  private last: EventLoopUtilization = performance.eventLoopUtilization();
  private readonly samples: number[] = [];
  private timer: NodeJS.Timeout | undefined;

  start(): void {
    this.timer ??= setInterval(() => this.sample(), SAMPLE_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The busy share (0 to 1) over the last second; 0 until a full second has been sampled. */
  share(): number {
    if (this.samples.length < WINDOW) return 0;
    return this.samples.reduce((sum, s) => sum + s, 0) / WINDOW;
  }

  private sample(): void {
    const now = performance.eventLoopUtilization();
    this.samples.push(performance.eventLoopUtilization(now, this.last).utilization);
    if (this.samples.length > WINDOW) this.samples.shift();
    this.last = now;
  }
}
