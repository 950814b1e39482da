import { Migration } from '@mikro-orm/migrations';

/**
 * The full-text indexes' pending lists kept at 256 kB instead of PostgreSQL's 4 MB. A GIN index
 * takes new entries into an unsorted pending list and merges it into the index proper when the
 * list passes this limit, inside the insert that passed it, or at the table's next vacuum. On
 * the embedded database that merge holds its one connection: in PGlite, 120,000 eight-word
 * messages inserted four to a transaction had their longest insert at 360–440 ms with 4 MB and
 * 78–101 ms with 256 kB, in the same total time (docs/performance.md, Table statistics). On a
 * PostgreSQL server it holds only the one transaction, but for as long.
 */
export class Migration20270126000000_text_search_pending_list extends Migration {
  override up(): void {
    this.addSql(`alter index messages_text_search set (gin_pending_list_limit = 256);`);
    this.addSql(`alter index users_text_search set (gin_pending_list_limit = 256);`);
  }
}
