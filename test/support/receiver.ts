// A real HTTP server on loopback standing in for a Service's webhook endpoint. It records
// every request and answers as told: a status, a delay, or never (a hanging receiver).
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: unknown;
  at: number;
  /** When the answer was sent; unset while it is pending (or hangs), or if the sender went away first. */
  answeredAt?: number;
  /** When its connection closed, answered or not: a sender killed mid-request ends its attempt here. */
  closedAt?: number;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
  /** Answer once this settles: an attempt kept in flight for exactly as long as the test needs (see gate()). */
  until?: Promise<unknown>;
  /** Never answer; the connection stays open until the client gives up or the receiver closes. */
  hang?: boolean;
  /** Send the status line, headers and part of the body, then stop: never end it, or reset the connection. */
  cutBody?: 'hang' | 'reset';
}

/** A promise and its release: `{ until: gate.closed }` holds answers until `gate.open()`. */
export function gate(): { closed: Promise<void>; open(): void } {
  let open = () => {};
  const closed = new Promise<void>((resolve) => (open = resolve));
  return { closed, open };
}

export class Receiver {
  readonly requests: Received[] = [];
  private readonly server: Server;
  private readonly script: Reply[] = [];
  private fallback: Reply = { status: 200 };
  private decide: ((request: Received) => Reply | undefined) | undefined;
  private readonly hanging = new Set<ServerResponse>();
  private waiters: Array<() => void> = [];
  url = '';

  private constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown = undefined;
        try {
          json = JSON.parse(body);
        } catch {
          // Recorded as text only.
        }
        const received: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json, at: Date.now() };
        this.requests.push(received);
        res.on('finish', () => (received.answeredAt = Date.now()));
        res.on('close', () => (received.closedAt = Date.now()));
        this.answer(res, this.decide?.(received) ?? this.script.shift() ?? this.fallback);
        for (const wake of this.waiters) wake();
      });
    });
  }

  static async start(): Promise<Receiver> {
    const receiver = new Receiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.server.address() as AddressInfo;
    receiver.url = `http://127.0.0.1:${port}`;
    return receiver;
  }

  /** The next requests get these replies, in order; after them, the fallback. */
  enqueue(...replies: Reply[]): this {
    this.script.push(...replies);
    return this;
  }

  /** Decides per request (by its body, say); returning undefined leaves it to the queue and fallback. */
  respondWith(decide: (request: Received) => Reply | undefined): this {
    this.decide = decide;
    return this;
  }

  /** What every request gets once the queued replies are used up. */
  always(reply: Reply): this {
    this.fallback = reply;
    return this;
  }

  /**
   * Resolves once at least `count` requests have arrived; rejects after `timeoutMs`. It says
   * nothing about requests after the `count`th: for "exactly", use exactly().
   */
  waitFor(count: number, timeoutMs = 10_000): Promise<Received[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.requests.length < count) return false;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve(this.requests.slice(0, count));
        return true;
      };
      const wake = () => void check();
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        reject(new Error(`receiver got ${this.requests.length} of ${count} requests in ${timeoutMs} ms`));
      }, timeoutMs);
      if (!check()) this.waiters.push(wake);
    });
  }

  /**
   * Exactly `count` requests, no fewer and no more: waits for `count`, then for `settled`, a
   * point after which nothing more can come (for a Service's receiver: every outbox row of the
   * Service delivered, see receivedExactly in outbox.ts), and fails if more arrived by then.
   */
  async exactly(count: number, settled: () => Promise<void>, timeoutMs = 10_000): Promise<Received[]> {
    await this.waitFor(count, timeoutMs);
    await settled();
    if (this.requests.length !== count) {
      const bodies = this.requests.map((r) => r.body.slice(0, 200)).join('\n  ');
      throw new Error(`receiver got ${this.requests.length} requests, expected exactly ${count}:\n  ${bodies}`);
    }
    return [...this.requests];
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(res: ServerResponse, reply: Reply): void {
    if (reply.hang || reply.cutBody) {
      this.hanging.add(res);
      res.on('close', () => this.hanging.delete(res));
      if (reply.cutBody) {
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', 'content-length': '100', ...reply.headers });
        res.write('{"partial":');
        if (reply.cutBody === 'reset') setTimeout(() => res.destroy(), 20);
      }
      return;
    }
    const send = () => {
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body ?? '{}');
    };
    if (reply.until) void reply.until.finally(() => (reply.delayMs ? setTimeout(send, reply.delayMs) : send()));
    else if (reply.delayMs) setTimeout(send, reply.delayMs);
    else send();
  }
}
