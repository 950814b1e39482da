// The retention of the audit log (audit.retentionDays): each node deletes entries past it on
// its own timer; sweepAudit() lets nodes sweeping at once skip each other's rows.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.ts';
import { sweepAudit } from './log.ts';

export class AuditSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly em: () => EntityManager,
    private readonly options: { retentionDays: number; intervalSeconds: number },
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweep().finally(() => (this.running = undefined));
    }, this.options.intervalSeconds * 1000);
    this.timer.unref();
  }

  async sweep(): Promise<number> {
    try {
      const swept = await sweepAudit(this.em(), this.options.retentionDays);
      if (swept > 0) this.logger.info({ swept }, 'audit entries past their retention deleted');
      return swept;
    } catch (err) {
      this.logger.warn({ err }, 'audit sweep failed');
      return 0;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
