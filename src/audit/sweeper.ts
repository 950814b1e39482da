// The retention of the audit log (audit.retentionDays): each node deletes entries past it on
// its own timer; sweepAudit() lets nodes sweeping at once skip each other's rows.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.ts';
import { Sweeper } from '../sweeper.ts';
import { sweepAudit } from './log.ts';

/** The audit log's sweeper of one node. */
export class AuditSweeper extends Sweeper {
  constructor(em: () => EntityManager, options: { retentionDays: number; intervalSeconds: number }, logger: Logger) {
    super(() => sweepAudit(em(), options.retentionDays), options.intervalSeconds, logger, {
      swept: 'audit entries past their retention deleted',
      failed: 'audit sweep failed',
    });
  }
}
