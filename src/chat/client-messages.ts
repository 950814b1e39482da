// Messages sent by chat clients (REST or socket): text, a user system message, or an image
// uploaded before with POST /media. Group commit: messages arriving while a transaction is
// being written wait for it and then go together in the next one, so under load one commit
// (one WAL flush, a handful of statements) accepts many messages. Each caller is answered
// only after its message and its delivery to the owner have committed.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account, Device, User } from '../db/entities/index.ts';
import { AppError } from '../http/errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { mediaOfConversation } from './media.ts';
import { recordUserMessages, type NewMessage, type UserMessage } from './messages.ts';

export interface ClientMessageInput {
  typeId: 1 | 4;
  text: string | null;
  media: { id: string; description?: string | null | undefined } | null;
  requestUrl: string | null;
}

export interface ClientMessage {
  account: Account;
  user: User;
  device: Device;
  input: ClientMessageInput;
}

interface Pending extends ClientMessage {
  resolve(message: NewMessage): void;
  reject(err: unknown): void;
}

export interface ClientMessageWriterOptions {
  em: () => EntityManager;
  logger: Logger;
  metrics: Pick<Metrics, 'messageBatchSize'>;
  /** The most messages one transaction takes; more wait for the next. */
  maxBatch?: number;
}

export class ClientMessageWriter {
  private queue: Pending[] = [];
  private running: Promise<void> | null = null;
  private readonly maxBatch: number;

  constructor(private readonly options: ClientMessageWriterOptions) {
    this.maxBatch = options.maxBatch ?? 200;
  }

  /** Resolves once the message and its delivery are committed; rejects with the caller's error alone. */
  send(message: ClientMessage): Promise<NewMessage> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...message, resolve, reject });
      this.running ??= this.run();
    });
  }

  /** Waits for every message handed in so far (shutdown: before the database closes). */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    // One turn of the event loop first, so requests that arrived together go together.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        this.options.metrics.messageBatchSize.observe(batch.length);
        await this.commit(batch);
      }
    } finally {
      this.running = null;
    }
  }

  private async commit(batch: Pending[]): Promise<void> {
    try {
      const outcomes = await this.options.em().transactional((tx) => this.write(tx, batch));
      batch.forEach((item, i) => {
        const outcome = outcomes[i];
        if (outcome && 'message' in outcome) item.resolve(outcome);
        else item.reject(outcome?.error);
      });
    } catch (err) {
      if (batch.length === 1) return batch[0]?.reject(err);
      // Nothing of the batch was written. Each message alone, so one that cannot be written
      // (or a deadlock, or a lost connection) fails only its own sender.
      this.options.logger.warn({ err, messages: batch.length }, 'group commit failed; writing its messages one by one');
      for (const item of batch) await this.commit([item]);
    }
  }

  /** One transaction: the messages whose uploads check out, with their deliveries. */
  private async write(tx: EntityManager, batch: Pending[]): Promise<Array<NewMessage | { error: unknown }>> {
    const outcomes: Array<NewMessage | { error: unknown }> = [];
    const accepted: Array<{ at: number; message: UserMessage }> = [];
    for (const [at, { account, user, device, input }] of batch.entries()) {
      try {
        // Only an upload of this conversation can be sent in it.
        const media = input.media ? await mediaOfConversation(tx, user.id, input.media) : null;
        const text = media ? null : input.text;
        accepted.push({ at, message: { account, user, input: { typeId: input.typeId, text, media, deviceId: device.id, requestUrl: input.requestUrl } } });
      } catch (err) {
        // A refusal (media_not_found) is the sender's alone; anything else aborts the transaction.
        if (!(err instanceof AppError)) throw err;
        outcomes[at] = { error: err };
      }
    }
    const recorded = await recordUserMessages(tx, accepted.map((a) => a.message));
    accepted.forEach(({ at }, i) => {
      outcomes[at] = recorded[i] ?? { error: new Error('message not recorded') };
    });
    return outcomes;
  }
}
