// One socket's stream of messages: every message of its conversation after `lastSent`, each
// once, in id order, whatever order notifications arrive in (or whether they arrive at all).
// A notification that continues exactly where the socket is goes straight out; anything else
// (a gap, a late or lost notification) makes the feed read the rest from PostgreSQL, the
// source of truth. One read at a time per socket.
import type { EntityManager } from '@mikro-orm/postgresql';
import { listMessages } from '../chat/messages.ts';
import type { Message } from '../db/entities/index.ts';

const PULL_BATCH = 200;

export interface FeedTarget {
  /** Messages from this device are the client's own: skipped, but counted as seen. */
  deviceId: number;
  userId: number;
  send(message: Message): void;
}

export class SocketFeed {
  private pulling: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly target: FeedTarget,
    private readonly em: () => EntityManager,
    public lastSent: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** A new message of the conversation, with the id of the one before it. */
  offer(message: Message, prevId: number | null): void {
    if (message.id <= this.lastSent) return;
    if (!this.pulling && prevId === this.lastSent) {
      this.deliver(message);
      return;
    }
    void this.pull();
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
        this.onError(err);
      } finally {
        this.pulling = undefined;
      }
    })();
    return this.pulling;
  }

  /** Starts over from another conversation (after a merge moved the socket). */
  restart(userId: number, lastSent: number): void {
    this.target.userId = userId;
    this.lastSent = lastSent;
  }

  private async read(): Promise<Message[]> {
    const newestFirst = await listMessages(this.em(), this.target.userId, { kind: 'after', id: this.lastSent }, PULL_BATCH);
    return newestFirst.reverse();
  }

  private deliver(message: Message): void {
    this.lastSent = message.id;
    if (message.deviceId !== this.target.deviceId) this.target.send(message);
  }
}
