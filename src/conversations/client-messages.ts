// Messages sent by chat clients (REST or socket): text, a user system message, or an image
// uploaded before with POST /media. Group-committed (group-commit.ts): each caller is answered
// only after its message and its delivery to the owner have committed.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account, Device, MessageType, User } from '../db/entities/index.ts';
import { AppError } from '../errors.ts';
import { messageNotice, notify } from './notices.ts';
import { GroupCommit, type GroupCommitOptions, type Written } from './group-commit.ts';
import { mediaOfConversation } from './media.ts';
import { recordUserMessages, type NewMessage, type UserMessage } from './messages.ts';

export interface ClientMessageInput {
  typeId: typeof MessageType.user | typeof MessageType.userSystem;
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

/** One writer per node. */
export type ClientMessageWriter = GroupCommit<ClientMessage, NewMessage>;

export function clientMessageWriter(options: Omit<GroupCommitOptions<ClientMessage, NewMessage>, 'name' | 'write'>): ClientMessageWriter {
  return new GroupCommit({ ...options, name: 'client', write: writeClientMessages });
}

/** One transaction: the messages whose uploads check out, with their deliveries. */
async function writeClientMessages(tx: EntityManager, batch: readonly ClientMessage[]): Promise<Array<Written<NewMessage>>> {
  const outcomes: Array<Written<NewMessage>> = [];
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
      outcomes[at] = { ok: false, error: err };
    }
  }
  const recorded = await recordUserMessages(tx, accepted.map((a) => a.message));
  accepted.forEach(({ at }, i) => {
    const value = recorded[i];
    outcomes[at] = value ? { ok: true, value } : { ok: false, error: new Error('message not recorded') };
    if (value) notify(tx, messageNotice(value.message, value.prevId));
  });
  return outcomes;
}
