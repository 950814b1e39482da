import { Migration } from '@mikro-orm/migrations';

/**
 * No statistics on what no statement filters or sorts by: the messages' payload (text, media,
 * agent, rich content), the users' additional information, the deliveries' payloads (a webhook's
 * whole body) and errors, and the two full-text expressions (their GIN indexes,
 * messages_text_search and users_text_search). An ANALYZE computes each
 * sampled row's tsvector for an expression index's statistics: on the embedded database, the
 * messages table's analysis took 250 ms at 60,000 rows with them and 70 ms without, time during
 * which its one connection serves nothing else (db/vacuum.ts; docs/performance.md). Without them
 * the planner gives a search term its default selectivity, and the inbox's search
 * (conversations/inbox.ts) reads the GIN indexes as before.
 */
export class Migration20270125000000_analysis_targets extends Migration {
  override up(): void {
    this.addSql(`
      alter table messages
        alter column message set statistics 0,
        alter column media set statistics 0,
        alter column agent set statistics 0,
        alter column content set statistics 0;`);
    this.addSql(`alter table users alter column additional_information set statistics 0;`);
    this.addSql(`alter table deliveries alter column payload set statistics 0, alter column last_error set statistics 0;`);
    this.addSql(`alter table delivery_attempts alter column error set statistics 0;`);
    this.addSql(`alter index messages_text_search alter column 1 set statistics 0;`);
    this.addSql(`alter index users_text_search alter column 1 set statistics 0;`);
  }
}
