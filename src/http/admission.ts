// Admission of the Client API's writes on one node: past its capacity a node refuses at once,
// with a code the client acts on (503 server_busy, Retry-After), instead of queueing writes until
// every caller times out, or accepting more than it can deliver. Four signs of a full node: too
// many client writes in progress; work waiting too long for a database connection
// (db/pool-waits.ts: the database, not this process, is what is full); the node's CPU full
// while its delivery worker has been behind for a while (its event loop busy nearly all the
// time, and more deliveries due than the worker holds, without a break: the node takes
// customers' messages faster than it sends their webhooks, so the outbox, and every answer
// behind it, would only grow); or the node's CPU full while the Services' answers wait to be
// written (the agents' writer's callers wait longer than maxAnswerWaitMs, db/tx/write-waits.ts:
// the webhooks are out, but the answers they bring back queue behind new customers' messages,
// so every conversation waits longer and none is answered within the minute). The event loop
// alone is no sign: it is as busy while sockets open, with nothing late. The worker alone is
// none either: a slow Service keeps it behind on that Service's deliveries, and its customers'
// messages must still be taken (the outbox is their queue); nor is a slow answer alone (a
// database slow for a moment, with the CPU free, is the database sign's). What a node has
// accepted it still commits and acknowledges; what it refuses it has not written, so a refused
// write is simply sent again (the widget retries it with the same clientMessageId; Parley
// clients retry a 5xx).
import { AppError } from '../errors.ts';

/** The code and wait a refused write is answered with, over REST (Retry-After) and sockets (data.retryAfter). */
export const serverBusy = (retryAfterSeconds: number) =>
  new AppError(503, 'server_busy', [], { retryAfter: retryAfterSeconds }, { 'retry-after': String(retryAfterSeconds) });

export interface AdmissionOptions {
  /** Client writes in progress on this node (accepted, not yet answered) beyond which more are refused. */
  maxWritesInFlight: number;
  /** The database wait (ms, see PoolWaits.waitMs) beyond which client writes are refused. */
  maxDatabaseWaitMs: number;
  /** How long the delivery worker may stay behind (ms) while the event loop is full before client writes are refused. */
  maxDeliveriesBehindMs: number;
  /** How long the Services' answers may wait to be written (ms, mean over the last second) while the event loop is full before client writes are refused. */
  maxAnswerWaitMs: number;
  /** The event loop's busy share (0 to 1, over the last second) at which it counts as full. */
  fullEventLoop: number;
  /** What a refusal tells the client to wait, in seconds. */
  retryAfterSeconds: number;
}

/** Why a write was refused: the label of palaver_client_writes_refused_total. */
export type RefusalReason = 'writes_in_flight' | 'database_wait' | 'deliveries_behind' | 'answers_waiting';

/** What the admission reads of the node, each time a write asks to enter. */
export interface LoadSigns {
  /** How long work waits for a database connection now, in ms (PoolWaits). */
  databaseWaitMs(): number;
  /** How long the delivery worker has been behind without a break, in ms (0 without a worker). */
  deliveriesBehindMs(): number;
  /** The event loop's busy share over the last second (EventLoopBusy). */
  eventLoopBusy(): number;
  /** How long the Services' answers wait to be written now, in ms (WriteWaits of the agents' writer). */
  answersWaitMs(): number;
}

export class Admission {
  private inFlight = 0;

  constructor(
    private readonly options: AdmissionOptions,
    /** Told of each refusal (the metrics count them). */
    private readonly onRefused: (reason: RefusalReason) => void,
    private readonly signs: LoadSigns,
  ) {}

  /**
   * Takes a place for one client write, counted synchronously so that a burst cannot pass the
   * bound together; the caller gives it back with the returned function once the write is
   * answered. Throws 503 server_busy when the node is full.
   */
  enter(): () => void {
    if (this.inFlight >= this.options.maxWritesInFlight) this.refuse('writes_in_flight');
    if (this.signs.databaseWaitMs() > this.options.maxDatabaseWaitMs) this.refuse('database_wait');
    // The loop first: both signs that follow need it full, and it is the cheapest to read.
    if (this.signs.eventLoopBusy() >= this.options.fullEventLoop) {
      if (this.signs.deliveriesBehindMs() > this.options.maxDeliveriesBehindMs) this.refuse('deliveries_behind');
      if (this.signs.answersWaitMs() > this.options.maxAnswerWaitMs) this.refuse('answers_waiting');
    }
    this.inFlight += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight -= 1;
    };
  }

  private refuse(reason: RefusalReason): never {
    this.onRefused(reason);
    throw serverBusy(this.options.retryAfterSeconds);
  }

  /** How long work waits for a database connection now, in ms. */
  get databaseWaitMs(): number {
    return this.signs.databaseWaitMs();
  }

  get writesInFlight(): number {
    return this.inFlight;
  }
}
