// Transactions in fewer round trips. A round trip to PostgreSQL costs more than most of our
// statements take to run (on the 2-core benchmark machine: about 0.7 ms against 0.1–0.4 ms), and
// a transaction of two statements costs four: BEGIN, the two, COMMIT. This pg client sends
// BEGIN with the transaction's first statement and, when the caller says a statement is the
// last (`commit: true`, see prepared.ts), COMMIT with it: such a transaction takes two.
//
// Both ride in the statement's extended-protocol exchange, before its Sync: Parse/Bind/Execute
// of BEGIN, the statement's own messages, Parse/Bind/Execute of COMMIT, one Sync. PostgreSQL
// runs them in order and stops at the first error (the rest is skipped up to the Sync), so the
// outcomes are those of sending them one by one: a failed statement leaves the transaction
// aborted for the ROLLBACK that follows, a failed COMMIT fails the statement that carried it.
//
// knex (under MikroORM) still sends "BEGIN;" and "COMMIT;"; this client answers them itself
// when they were, or will be, sent with a statement. It relies on pg's Query and Client
// internals, hence the exact pg version in package.json and the tests in test/pipelined.test.ts.
import { PostgreSqlConnection, PostgreSqlDriver, PostgreSqlKnexDialect, type Configuration } from '@mikro-orm/postgresql';
import pg from 'pg';

type Callback = (err: Error | null, result?: unknown) => void;

interface QueryConfig {
  text: string;
  name?: string;
  values?: unknown[];
  /** This is the transaction's last statement: its COMMIT is sent with it. */
  commit?: boolean;
  submit?: unknown;
}

/** The parts of pg's wire connection and Query this file uses (not in pg's type definitions). */
interface Wire {
  stream: { cork?(): void; uncork?(): void };
  parsedStatements: Record<string, string>;
  parse(message: { text: string; name?: string }): void;
  bind(message: Record<string, never>): void;
  execute(message: { portal?: string; rows?: number }): void;
  sync(): void;
}

interface QueryInternals {
  name?: string;
  text: string;
  portal: string;
  requiresPreparation(): boolean;
  submit(connection: Wire): Error | null;
  handleCommandComplete(message: unknown, connection: Wire): void;
  _getRows(connection: Wire, rows: number | undefined): void;
}

const QueryBase = pg.Query as unknown as new (config: QueryConfig, values: undefined, callback: Callback) => QueryInternals;

/** A statement with the BEGIN before it and/or the COMMIT after it, in one exchange. */
class PipelinedQuery extends QueryBase {
  /** Whose ParseComplete comes next: only the statement's own marks it prepared on the connection. */
  private readonly parses: Array<'begin' | 'statement' | 'commit'> = [];
  private skipBegin: boolean;
  private statementDone = false;

  constructor(
    config: QueryConfig,
    private readonly begin: string | null,
    private readonly commit: boolean,
    callback: Callback,
  ) {
    super(config, undefined, callback);
    this.skipBegin = begin !== null;
    // A plain-text query (no values) goes as one simple query: "BEGIN; …".
    if (begin !== null && !this.requiresPreparation()) this.text = `${begin}\n${this.text}`;
  }

  override submit(connection: Wire): Error | null {
    if (!this.requiresPreparation()) return super.submit(connection);
    connection.stream.cork?.();
    try {
      if (this.begin !== null) {
        this.parses.push('begin');
        connection.parse({ text: this.begin });
        connection.bind({});
        connection.execute({});
      }
      if (!(this.name && connection.parsedStatements[this.name])) this.parses.push('statement');
      if (this.commit) this.parses.push('commit');
      return super.submit(connection);
    } finally {
      connection.stream.uncork?.();
    }
  }

  /** pg's Query ends its exchange here (Execute, Sync): the COMMIT goes between the two. */
  override _getRows(connection: Wire, rows: number | undefined): void {
    if (!this.commit || rows) return super._getRows(connection, rows);
    connection.execute({ portal: this.portal });
    connection.parse({ text: 'COMMIT' });
    connection.bind({});
    connection.execute({});
    connection.sync();
  }

  /** Called by PipelinedClient for each ParseComplete of this exchange. */
  parsed(connection: Wire): void {
    if (this.parses.shift() === 'statement' && this.name) connection.parsedStatements[this.name] = this.text;
  }

  override handleCommandComplete(message: unknown, connection: Wire): void {
    if (this.skipBegin) {
      this.skipBegin = false;
      return;
    }
    // The COMMIT's: the statement's result is complete already.
    if (this.commit && this.statementDone) return;
    this.statementDone = true;
    super.handleCommandComplete(message, connection);
  }
}

interface ClientInternals {
  query(config: unknown, values?: unknown, callback?: unknown): unknown;
  _getActiveQuery(): unknown;
  _handleParseComplete(): void;
  connection: Wire;
}

const ClientBase = pg.Client as unknown as new (config?: pg.ClientConfig) => ClientInternals;

const BEGIN = /^\s*BEGIN\b/i;
const COMMIT = /^\s*COMMIT\s*;?\s*$/i;
const ROLLBACK = /^\s*ROLLBACK\s*;?\s*$/i;
const SAVEPOINT = /^\s*SAVEPOINT\b/i;
const SAVEPOINT_END = /^\s*(RELEASE|ROLLBACK\s+TO)\b/i;

/** Answers a statement this client did not send (or sent with another) as if it had run. */
function answer(callback: Callback, command: string): void {
  process.nextTick(() => callback(null, { command, rowCount: null, rows: [], fields: [] }));
}

export class PipelinedClient extends ClientBase {
  /** knex's BEGIN, held back until the transaction's first statement. */
  private pendingBegin: string | null = null;
  private inTransaction = false;
  /** Savepoints open inside the transaction: a statement in one cannot carry the COMMIT. */
  private savepoints = 0;
  /** A statement carried the COMMIT, and it succeeded: the transaction is over. */
  private committed = false;

  override query(config: unknown, values?: unknown, callback?: unknown): unknown {
    const done = (typeof values === 'function' ? values : callback) as Callback | undefined;
    const query = typeof config === 'string' ? { text: config } : (config as QueryConfig | null);
    // Promise-style calls and submittables (cursors, streams) are not knex's: sent as they are.
    if (!done || !query || typeof query.text !== 'string' || query.submit !== undefined) return super.query(config, values, callback);
    const { text } = query;
    const plain = !query.name && !query.values?.length;

    if (plain && BEGIN.test(text) && !this.inTransaction) {
      this.pendingBegin = text;
      this.inTransaction = true;
      this.savepoints = 0;
      this.committed = false;
      return answer(done, 'BEGIN');
    }
    if (plain && (COMMIT.test(text) || ROLLBACK.test(text)) && this.inTransaction) {
      // Nothing was sent (no statement), or the COMMIT went with the last one: nothing to send.
      const unsent = this.pendingBegin !== null || this.committed;
      this.pendingBegin = null;
      this.inTransaction = false;
      this.committed = false;
      if (unsent) return answer(done, COMMIT.test(text) ? 'COMMIT' : 'ROLLBACK');
      return super.query(config, values, callback);
    }
    if (this.committed) {
      // The transaction committed with its "last" statement: this one would run outside it.
      process.nextTick(() => done(new Error(`statement after the transaction's last one: ${text.slice(0, 80)}`)));
      return undefined;
    }
    if (plain && SAVEPOINT.test(text)) this.savepoints++;
    else if (plain && SAVEPOINT_END.test(text)) this.savepoints = Math.max(0, this.savepoints - 1);

    const commit = query.commit === true && this.inTransaction && this.savepoints === 0;
    if (this.pendingBegin === null && !commit) return super.query(config, values, callback);
    const begin = this.pendingBegin;
    this.pendingBegin = null;
    const { commit: _flag, ...plainConfig } = query;
    const pipelined = new PipelinedQuery(plainConfig, begin, commit, (err, result) => {
      if (!err && commit) this.committed = true;
      done(err, result);
    });
    return super.query(pipelined);
  }

  override _handleParseComplete(): void {
    const active = this._getActiveQuery();
    if (active instanceof PipelinedQuery) active.parsed(this.connection);
    else super._handleParseComplete();
  }
}

/** knex's PostgreSQL dialect, making PipelinedClient connections. */
class PipelinedDialect extends PostgreSqlKnexDialect {
  _driver(): typeof pg {
    return { ...pg, Client: PipelinedClient } as unknown as typeof pg;
  }
}

class PipelinedConnection extends PostgreSqlConnection {
  override createKnex(): void {
    this.client = this.createKnexClient(PipelinedDialect as unknown as string);
    (this.client.client as { ormConfig?: unknown }).ormConfig = this.config;
    this.connected = true;
  }
}

/** MikroORM's PostgreSQL driver on PipelinedClient connections (`driver` in MikroORM.init). */
export class PipelinedPostgreSqlDriver extends PostgreSqlDriver {
  constructor(config: Configuration) {
    super(config);
    (this as unknown as { connection: PostgreSqlConnection }).connection = new PipelinedConnection(config);
  }
}
