// One socket's stream of messages: every message of its conversation after `lastSent`, each
// once, in id order, whatever order notifications arrive in (or whether they arrive at all).
// A notification that continues exactly where the socket is goes straight out; anything else
// (a gap, a late or lost notification) makes the feed read the rest from PostgreSQL, the
// source of truth. One read at a time per socket.
import type { EntityManager } from '@mikro-orm/postgresql';
import { listMessages } from '../conversations/messages.ts';
import type { Message } from '../db/entities/index.ts';

const PULL_BATCH = 200;

export interface FeedSocket {
  data: {
    /** Messages from this device are the client's own: skipped, but counted as seen. */
    deviceId: number;
    /** The conversation (changed by a merge, with restart()). */
    userId: number;
  };
}

/** What every feed uses, made once: a feed holds no closures of its own (memory per idle socket). */
export interface FeedOutlet<S extends FeedSocket> {
  em: () => EntityManager;
  send(socket: S, message: Message): void;
  onError(err: unknown): void;
}

export class SocketFeed<S extends FeedSocket> {
  private pulling: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly socket: S,
    private readonly outlet: FeedOutlet<S>,
    public lastSent: number,
  ) {}

  /**
   * A new message of the conversation, with the id of the one before it. True when it
   * continues this feed and is for this socket: the caller sends it (once for all the sockets
   * it goes to, see Gateway.offer); anything else the feed sees to itself.
   */
  take(message: Message, prevId: number | null): boolean {
    if (message.id <= this.lastSent) return false;
    // Its user is checked as well: another conversation's first message (no previous one) would
    // otherwise continue a socket that has nothing.
    if (!this.pulling && message.userId === this.socket.data.userId && this.continues(prevId)) {
      this.lastSent = message.id;
      return message.deviceId !== this.socket.data.deviceId;
    }
    void this.pull();
    return false;
  }

  /**
   * Whether a message of this socket's conversation whose previous client-visible one is `prevId`
   * comes right after what this socket has. A conversation's first message has none (null), and
   * continues a socket that has nothing (0): a new conversation's first messages go straight on,
   * without a read.
   */
  continues(prevId: number | null): boolean {
    return (prevId ?? 0) === this.lastSent;
  }

  /** Reads and sends whatever is after lastSent; a request during a read makes one more read. */
  pull(): Promise<void> {
    if (this.pulling) {
      this.again = true;
      return this.pulling;
    }
    this.pulling = (async () => {
      try {
        do {
          this.again = false;
          const batch = await this.read();
          for (const message of batch) this.deliver(message);
          if (batch.length === PULL_BATCH) this.again = true;
        } while (this.again);
      } catch (err) {
        this.outlet.onError(err);
      } finally {
        this.pulling = undefined;
      }
    })();
    return this.pulling;
  }

  /** Starts over in another conversation (after a merge moved the socket to socket.data.userId). */
  restart(lastSent: number): void {
    this.lastSent = lastSent;
  }

  private async read(): Promise<Message[]> {
    const newestFirst = await listMessages(this.outlet.em(), this.socket.data.userId, { kind: 'after', id: this.lastSent }, PULL_BATCH);
    return newestFirst.reverse();
  }

  private deliver(message: Message): void {
    this.lastSent = message.id;
    if (message.deviceId !== this.socket.data.deviceId) this.outlet.send(this.socket, message);
  }
}
