// Transactions in fewer round trips. A round trip to PostgreSQL costs more than most of our
// statements take to run (on the 2-core benchmark machine: about 0.7 ms against 0.1–0.4 ms), and
// a transaction of two statements costs four: BEGIN, the two, COMMIT. On a connection in pg's
// pipeline mode (`pipeline: true`: each query is written as soon as it is queued, with its own
// Sync, without waiting for the answers before it) this client queues BEGIN together with the
// transaction's first statement and, when the caller says a statement is the last
// (`commit: true`, see prepared.ts), COMMIT right behind it: such a transaction takes two.
//
// It uses pg's public interface only: the `pipeline` option, query() with a callback, the
// results' command tags and getTransactionStatus(). With one Sync per query, a statement that
// fails does not stop the ones queued behind it: PostgreSQL runs them in the aborted transaction,
// where they fail too, and answers the COMMIT with the command tag ROLLBACK (no error). So:
// - the statement that carried the COMMIT reports its own error, else the COMMIT's (a deferred
//   constraint, a serialization failure), else a COMMIT answered ROLLBACK; it succeeds only when
//   the COMMIT did; a knex COMMIT answered ROLLBACK fails as well;
// - COMMIT is queued only once its statement was handed to the connection without a client-side
//   error (a value pg cannot serialize fails the call at once): a statement that never reached
//   PostgreSQL cannot let a COMMIT of the statements before it through;
// - the first statement fails if the BEGIN before it failed, and a statement that ran outside a
//   transaction although one was begun (the connection's status after it says idle) fails;
// - once a statement carried the COMMIT, nothing more is sent in that transaction.
//
// knex (under MikroORM) still sends "BEGIN;" and "COMMIT;"/"ROLLBACK;": this client answers
// BEGIN itself and queues it with the next statement (a transaction without statements sends
// nothing), and answers the end itself when nothing was sent or a statement already ended it.
import { PostgreSqlKnexDialect } from '@mikro-orm/postgresql';
import pg from 'pg';

type Callback = (err: Error | null, result?: pg.QueryResult) => void;

/** A query as knex and prepared() send it, with our flag. */
interface Statement {
  text: string;
  name?: string;
  values?: unknown[];
  /** This is the transaction's last statement: its COMMIT is queued right behind it. */
  commit?: boolean;
}

interface LooseQuery {
  query(config: unknown, values?: unknown, callback?: unknown): unknown;
}

/** pg's Client with query() loosely typed, so that one override covers its overloads. */
const Client = pg.Client as unknown as new (config?: pg.ClientConfig) => Omit<pg.Client, 'query'> & LooseQuery;

const BEGIN = /^\s*BEGIN\b/i;
const COMMIT = /^\s*COMMIT\s*;?\s*$/i;
const ROLLBACK = /^\s*ROLLBACK\s*;?\s*$/i;
const SAVEPOINT = /^\s*SAVEPOINT\b/i;
const SAVEPOINT_END = /^\s*(RELEASE|ROLLBACK\s+TO)\b/i;

/** Answers a statement this client did not send (or sent with another) as if it had run. */
function answer(callback: Callback, command: string): void {
  process.nextTick(() => callback(null, { command, rowCount: null, rows: [], fields: [], oid: 0 }));
}

function fail(callback: Callback, message: string): void {
  process.nextTick(() => callback(new Error(message)));
}

/** The callback called once: pg may answer a query whose values failed to serialize twice. */
function once(callback: Callback): Callback {
  let called = false;
  return (err, result) => {
    if (called) return;
    called = true;
    callback(err, result);
  };
}

/** How the transaction ended when a statement carried its COMMIT. */
type Ended = 'committing' | 'committed' | 'rolled back';

export class PipelinedClient extends Client {
  /** knex's BEGIN, held back until the transaction's first statement. */
  private pendingBegin: string | null = null;
  private inTransaction = false;
  /** Savepoints open inside the transaction: a statement in one cannot carry the COMMIT. */
  private savepoints = 0;
  /** Set once a statement carried the COMMIT: nothing more goes out in this transaction. */
  private ended: Ended | null = null;

  constructor(config?: pg.ClientConfig) {
    super({ ...config, pipeline: true });
  }

  override query(config: unknown, values?: unknown, callback?: unknown): unknown {
    const done = (typeof values === 'function' ? values : callback) as Callback | undefined;
    const statement: Statement | null =
      typeof config === 'string'
        ? { text: config, values: Array.isArray(values) ? (values as unknown[]) : undefined }
        : (config as Statement | null);
    // Promise-style calls, and submittables (which pipeline mode refuses anyway), are not knex's.
    if (!done || !statement || typeof statement.text !== 'string' || 'submit' in statement) return super.query(config, values, callback);
    if (statement.values !== undefined && !Array.isArray(statement.values)) return super.query(config, values, callback);
    const { text } = statement;
    const plain = !statement.name && !statement.values?.length;

    if (plain && BEGIN.test(text) && !this.inTransaction) {
      this.pendingBegin = text;
      this.inTransaction = true;
      this.savepoints = 0;
      this.ended = null;
      return answer(done, 'BEGIN');
    }
    if (plain && (COMMIT.test(text) || ROLLBACK.test(text)) && this.inTransaction) return this.endTransaction(text, done);
    if (this.ended) {
      // A statement carried the COMMIT: this one would run outside the transaction.
      return fail(done, `statement after the transaction's last one: ${text.slice(0, 80)}`);
    }
    if (plain && SAVEPOINT.test(text)) this.savepoints++;
    else if (plain && SAVEPOINT_END.test(text)) this.savepoints = Math.max(0, this.savepoints - 1);

    const commit = statement.commit === true && this.inTransaction && this.savepoints === 0;
    const { commit: _flag, ...query } = statement;
    const begin = this.pendingBegin;
    this.pendingBegin = null;
    if (begin === null && !commit) return super.query(query, done);
    return this.carry(begin, query, commit, once(done));
  }

  /** knex's COMMIT or ROLLBACK: sent, or answered here when nothing was sent or the transaction already ended. */
  private endTransaction(text: string, done: Callback): unknown {
    const unsent = this.pendingBegin !== null;
    const ended = this.ended;
    this.pendingBegin = null;
    this.inTransaction = false;
    this.ended = null;
    const commit = COMMIT.test(text);
    if (unsent) return answer(done, commit ? 'COMMIT' : 'ROLLBACK');
    // After a statement's COMMIT a ROLLBACK has nothing left to undo (hence: nothing may throw after it).
    if (ended && !commit) return answer(done, 'ROLLBACK');
    if (ended === 'committed') return answer(done, 'COMMIT');
    if (ended === 'committing') return fail(done, 'COMMIT before the statement carrying it was answered');
    if (ended) return fail(done, 'COMMIT of a transaction that was rolled back');
    if (!commit) return super.query({ text }, done);
    return super.query({ text }, (err: Error | null, result?: pg.QueryResult) => {
      // PostgreSQL answers the COMMIT of a failed transaction with ROLLBACK, not with an error.
      if (!err && result?.command !== 'COMMIT') return done(new Error('the transaction was rolled back at COMMIT'));
      done(err, result);
    });
  }

  /** The statement, with BEGIN queued before it and/or COMMIT behind it. */
  private carry(begin: string | null, query: Omit<Statement, 'commit'>, commit: boolean, done: Callback): unknown {
    // In pipeline mode each query is written as it is queued: corked, they leave in one write.
    const { stream } = this.connection;
    stream.cork();
    try {
      this.queue(begin, query, commit, done);
    } finally {
      stream.uncork();
    }
    return undefined;
  }

  private queue(begin: string | null, query: Omit<Statement, 'commit'>, commit: boolean, done: Callback): void {
    let beginError: Error | null = null;
    if (begin !== null) super.query({ text: begin }, (err: Error | null) => (beginError = err));

    let outcome: { err: Error | null; result?: pg.QueryResult } | null = null;
    let committing = false;
    super.query(query, (err: Error | null, result?: pg.QueryResult) => {
      // Answers come in order: the BEGIN's is in by now.
      err ??= beginError;
      if (!err && this.getTransactionStatus() === 'I') err = new Error('statement ran outside its transaction');
      outcome = { err, result };
      if (!committing) done(err, result);
    });
    // A statement pg refused before sending it (a value it cannot serialize) is answered at once:
    // no COMMIT, the transaction stays open for the caller's ROLLBACK.
    if (!commit || outcome) return;
    committing = true;
    this.ended = 'committing';
    super.query({ text: 'COMMIT' }, (err: Error | null, result?: pg.QueryResult) => {
      const statement = outcome ?? { err: new Error('COMMIT answered before its statement') };
      // A failed COMMIT ends the transaction too; a COMMIT of an aborted one answers ROLLBACK.
      const failure =
        statement.err ?? err ?? (result?.command === 'COMMIT' ? null : new Error('the transaction was rolled back at COMMIT'));
      this.ended = failure ? 'rolled back' : 'committed';
      if (failure) done(failure);
      else done(null, statement.result);
    });
  }
}

/**
 * knex's PostgreSQL dialect, making PipelinedClient connections. knex creates a connection with
 * `new this.driver.Client(settings)`, the driver being what its dialect's `_driver()` returns (the
 * method every knex dialect implements to name its driver module); there is no option to give it
 * a client class, so the dialect overrides that method. It reaches knex as MikroORM's
 * `driverOptions.client` (orm.ts).
 */
export class PipelinedDialect extends PostgreSqlKnexDialect {
  _driver(): typeof pg {
    return { ...pg, Client: PipelinedClient } as unknown as typeof pg;
  }
}
