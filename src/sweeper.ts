// A sweep every node runs on its own timer (old uploads, old audit entries): a pass every
// interval, the first one interval after start, never two at once on a node (a slow pass makes
// the next tick skip); a failed pass is logged and the next tick tries again; stop() waits for
// the pass under way so shutdown closes nothing it still uses.
import type { Logger } from './logger.ts';

export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    /** One pass; how many rows it removed. */
    private readonly pass: () => Promise<number>,
    private readonly intervalSeconds: number,
    private readonly logger: Logger,
    /** What the logs say of a pass that removed something, and of one that failed. */
    private readonly messages: { swept: string; failed: string },
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweep().finally(() => (this.running = undefined));
    }, this.intervalSeconds * 1000);
    this.timer.unref();
  }

  /** One pass now: how many rows it removed (0 when it failed). */
  async sweep(): Promise<number> {
    try {
      const swept = await this.pass();
      if (swept > 0) this.logger.info({ swept }, this.messages.swept);
      return swept;
    } catch (err) {
      this.logger.warn({ err }, this.messages.failed);
      return 0;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
