// A widget's Socket.IO connection for tests: records what the server pushes, reconnects with
// the last message id it has (as a real client would), and waits for things with deadlines.
// "Exactly" ends with a round trip on the same connection, so that pushes the test did not
// expect fail it instead of going unnoticed.
import { expect } from 'chai';
import { io, type Socket } from 'socket.io-client';
import type { Envelope } from '../../src/presenters/envelope.ts';
import type { Widget } from './widget.ts';

export interface Pushed {
  event: string;
  payload: { id?: number; [key: string]: unknown };
}

export class WidgetSocket {
  readonly pushed: Pushed[] = [];
  lastMessageId: number | undefined;
  readonly socket: Socket;

  constructor(widget: Widget, options: { lastMessageId?: number; baseUrl?: string; origin?: string } = {}) {
    this.lastMessageId = options.lastMessageId;
    this.socket = io(options.baseUrl ?? widget.baseUrl, {
      path: '/socket.io',
      transports: ['websocket'],
      reconnection: false,
      // A browser page's socket: its handshake names the page's origin.
      ...(options.origin ? { extraHeaders: { origin: options.origin } } : {}),
      // Called on every (re)connection: the server catches up from the last message we have.
      auth: (cb) =>
        cb({
          identification: `${widget.account.identification}:${widget.deviceId}`,
          ...(widget.authorization ? { authorization: widget.authorization } : {}),
          ...(this.lastMessageId !== undefined ? { lastMessageId: this.lastMessageId } : {}),
        }),
    });
    this.socket.onAny((event: string, payload: Pushed['payload']) => {
      this.pushed.push({ event, payload });
      if (event === 'message' && typeof payload.id === 'number') this.lastMessageId = payload.id;
    });
  }

  /** Resolves when connected; rejects with the connect_error (message = the error code). */
  connected(timeoutMs = 10_000): Promise<void> {
    if (this.socket.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('socket did not connect')), timeoutMs);
      this.socket.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
      this.socket.once('connect_error', (err: Error) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  async reconnect(): Promise<void> {
    this.socket.disconnect();
    this.socket.connect();
    await this.connected();
  }

  emit(event: string, body?: unknown): Promise<Envelope & { data: Record<string, unknown> }> {
    return this.socket.timeout(10_000).emitWithAck(event, body ?? {}) as Promise<Envelope & { data: Record<string, unknown> }>;
  }

  messages(): Array<Pushed['payload']> {
    return this.pushed.filter((p) => p.event === 'message').map((p) => p.payload);
  }

  events(name: string): Array<Pushed['payload']> {
    return this.pushed.filter((p) => p.event === name).map((p) => p.payload);
  }

  /**
   * Waits until at least `count` pushes of `event` arrived (a deadline, not a timing
   * assertion). Says nothing about more: for "exactly", use expectExactly or waitForExactly.
   */
  async waitFor(event: string, count: number, timeoutMs = 15_000): Promise<Array<Pushed['payload']>> {
    const deadline = Date.now() + timeoutMs;
    while (this.events(event).length < count) {
      if (Date.now() > deadline) throw new Error(`got ${this.events(event).length} of ${count} '${event}' events`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.events(event);
  }

  /**
   * A round trip on this connection: an event the server answers without changing anything (a
   * message it refuses as empty). Socket.IO keeps the packets of one connection in order, so
   * once the answer is here, everything the server sent this socket before answering is in
   * `pushed`.
   */
  async roundTrip(): Promise<void> {
    const answer = await this.emit('message', {});
    expect(answer.notifications[0]?.message, 'the round trip is a refused empty message').to.equal('validation_failed');
  }

  /**
   * Exactly these pushes, counted by event name, and nothing else: waits for the counts, makes
   * a round trip, then fails on any push more, of these events or of any other, that the
   * server sent by then. Returns everything pushed, in order.
   */
  async expectExactly(counts: Record<string, number>, timeoutMs = 15_000): Promise<Pushed[]> {
    for (const [event, count] of Object.entries(counts)) await this.waitFor(event, count, timeoutMs);
    await this.roundTrip();
    expect(this.tally(), 'pushes by event').to.deep.equal(Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0)));
    return [...this.pushed];
  }

  /** Exactly `count` pushes of `event` (others are not counted), checked after a round trip. */
  async waitForExactly(event: string, count: number, timeoutMs = 15_000): Promise<Array<Pushed['payload']>> {
    await this.waitFor(event, count, timeoutMs);
    await this.roundTrip();
    expect(this.events(event), `'${event}' pushes`).to.have.length(count);
    return this.events(event);
  }

  /** How many pushes of each event arrived so far. */
  tally(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { event } of this.pushed) counts[event] = (counts[event] ?? 0) + 1;
    return counts;
  }

  close(): void {
    this.socket.disconnect();
  }
}
