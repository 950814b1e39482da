// The retention of the audit log (audit.retentionDays): each node deletes entries past it on
// its own timer; sweepAudit() lets nodes sweeping at once skip each other's rows.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.ts';
import { Periodic } from '../periodic.ts';
import { sweepAudit } from './log.ts';

export class AuditSweeper {
  private readonly periodic: Periodic;

  constructor(
    private readonly em: () => EntityManager,
    private readonly options: { retentionDays: number; intervalSeconds: number },
    private readonly logger: Logger,
  ) {
    this.periodic = new Periodic(() => this.sweep(), options.intervalSeconds);
  }

  start(): void {
    this.periodic.start();
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

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
