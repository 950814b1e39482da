// PGlite's one session served over the PostgreSQL wire protocol on loopback, to the server's pg
// pool of one connection (PGlite is one session). Every complete message that has arrived goes
// to PGlite in one call and its whole answer leaves in one write: a pipelined batch of
// statements (db/pipelined.ts), each a Bind, Execute and Sync, costs one pass through PGlite's
// loop and one segment each way, where a server that takes one message at a time pays a call,
// a promise chain and a write per message. PGlite runs a batch synchronously, so nothing else
// runs in between, and its answer leaves in the same turn of the event loop.
//
// The answer is taken as PGlite streams it out (execProtocolRawStream), never through its
// default output handler (what execProtocolRawSync and execProtocolRaw use): that handler
// parses every message answered and keeps the parsed messages for an execProtocol() call to
// collect, which a wire server never makes. The thread's heap then grew by everything ever
// answered (20-25 KB a conversation in the capacity bench, never given back), and the parse
// cost the database's thread CPU for nothing.
import { createServer, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

/** Requests sent before the startup message, with no type byte: length, then this code. */
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const TERMINATE = 'X'.charCodeAt(0);

/**
 * What a client that went away leaves behind is cleared before the next one starts: a Sync ends
 * any extended-protocol sequence it left open, ROLLBACK its transaction, DISCARD ALL its prepared
 * statements (the next client's pg would prepare the same names) and settings. Two Query
 * messages, because DISCARD ALL cannot run in the implicit transaction of a multi-statement one.
 */
const RESET = Buffer.concat([Buffer.from([0x53, 0, 0, 0, 4]), query('ROLLBACK'), query('DISCARD ALL')]);

function query(text: string): Buffer {
  const body = Buffer.from(`${text}\0`);
  const head = Buffer.alloc(5);
  head[0] = 0x51; // 'Q'
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

export interface WireServer {
  port: number;
  /** Stops accepting, closes the connections; the caller closes PGlite afterwards. */
  close(): Promise<void>;
}

export interface WireOptions {
  host?: string;
  /**
   * Nanoseconds PGlite spent executing, added to slot 0 after each call (shared with the main
   * thread, which reads it for palaver_embedded_database_busy_seconds_total).
   */
  busy?: BigInt64Array;
}

export async function serveWire(db: PGlite, { host = '127.0.0.1', busy }: WireOptions = {}): Promise<WireServer> {
  /**
   * PGlite's answer to `messages`, gathered from the chunks it streams (views of its memory,
   * copied). It runs synchronously; the promise settles with the answer, or with PGlite's own
   * failure (a startup it cannot take).
   */
  const execute = (messages: Uint8Array): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    const start = busy ? process.hrtime.bigint() : 0n;
    const done = db.execProtocolRawStream(messages, { syncToFs: false, onRawData: (chunk) => chunks.push(Buffer.from(chunk)) });
    if (busy) Atomics.add(busy, 0, process.hrtime.bigint() - start);
    return done.then(() => (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
  };
  /** The connection that has the session; others wait their turn (a pool replacing a broken connection may reach us first). */
  let current: Session | null = null;
  const waiting: Session[] = [];
  /** Once closing, PGlite is about to close: a connection's end clears nothing. */
  let closing = false;

  function next(): void {
    while (!current && waiting.length > 0) {
      const session = waiting.shift()!;
      if (session.socket.destroyed) continue;
      current = session;
      session.take();
    }
  }

  const server = createServer((socket) => {
    socket.setNoDelay(true);
    const session = new Session(execute, socket, () => {
      if (current === session) {
        current = null;
        if (closing) return;
        // Its answer is nobody's; a failure here shows in the next client's first statement.
        if (session.started) void execute(RESET).catch(() => undefined);
        next();
      } else {
        // Still waiting, unless next() already dropped it as destroyed.
        const at = waiting.indexOf(session);
        if (at >= 0) waiting.splice(at, 1);
      }
    });
    waiting.push(session);
    next();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the embedded database did not get a port');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        // Answered once every connection has closed.
        server.close(() => resolve());
        for (const session of [current, ...waiting]) session?.socket.destroy();
      }),
  };
}

class Session {
  private buffered: Buffer = Buffer.alloc(0);
  /** Past the startup message: the session holds this client's state. */
  started = false;
  private active = false;
  private closed = false;
  /** What this connection is sent, in order: an answer, then a close that came after it. */
  private replies: Promise<void> = Promise.resolve();

  constructor(
    /** Hands PGlite protocol messages and answers what it answered (serveWire's execute). */
    private readonly execute: (messages: Uint8Array) => Promise<Buffer>,
    readonly socket: Socket,
    onClose: () => void,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
      if (this.active) this.drain();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      if (this.closed) return;
      this.closed = true;
      onClose();
    });
  }

  /** This connection has the session now: answer what it has sent. */
  take(): void {
    this.active = true;
    this.drain();
  }

  private drain(): void {
    while (!this.started && this.buffered.length >= 8) {
      const length = this.buffered.readInt32BE(0);
      if (this.buffered.length < length) return;
      const code = this.buffered.readInt32BE(4);
      const packet = this.buffered.subarray(0, length);
      this.buffered = this.buffered.subarray(length);
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) this.socket.write('N');
      else if (code === CANCEL_REQUEST) {
        // Nothing runs concurrently to cancel: PGlite answers each batch before the next arrives.
        this.socket.end();
        return;
      } else {
        this.started = true;
        this.answer(packet);
      }
    }
    if (!this.started) return;
    // Typed messages: a type byte, then a length that counts itself. Take every complete one.
    let end = 0;
    let terminate = false;
    while (this.buffered.length - end >= 5) {
      const size = 1 + this.buffered.readInt32BE(end + 1);
      if (size < 5) {
        // A length shorter than itself: not the protocol. Nothing of it reaches PGlite.
        this.socket.destroy();
        return;
      }
      if (this.buffered.length - end < size) break;
      if (this.buffered[end] === TERMINATE) {
        terminate = true;
        break;
      }
      end += size;
    }
    if (end > 0) {
      const batch = this.buffered.subarray(0, end);
      this.buffered = this.buffered.subarray(end);
      this.answer(batch);
    }
    if (terminate) this.afterReplies(() => this.socket.end());
  }

  /** Runs `step` once what was sent before it has been sent. */
  private afterReplies(step: () => void): void {
    this.replies = this.replies.then(step);
  }

  private answer(messages: Uint8Array): void {
    // PGlite has run the batch by the time execute() returns; only the answer's write waits.
    const answered = this.execute(messages);
    this.replies = this.replies
      .then(() => answered)
      .then(
        (answer) => {
          if (answer.length > 0 && this.socket.writable) this.socket.write(answer);
        },
        () => {
          // PGlite answers a statement's error in the protocol; what it throws is its own failure
          // (a startup it cannot take): the client sees its connection end, the worker goes on.
          this.socket.destroy();
        },
      );
  }
}
