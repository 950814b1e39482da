// A task every node runs on its own timer (the sweepers): a pass every interval, the first one
// interval after start, never two at once on a node (a slow pass makes the next tick skip), and
// stop() waits for the pass under way so shutdown closes nothing it still uses.
export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly intervalSeconds: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.pass().finally(() => (this.running = undefined));
    }, this.intervalSeconds * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
