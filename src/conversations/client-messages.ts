// Messages sent by chat clients (REST or socket): text, a user system message, or an image
// uploaded before with POST /media. Group-committed (group-commit.ts): each caller is answered
// only after its message and its delivery to the owner have committed.
import type { Transaction } from '../db/tx/transaction.ts';
import { MessageSchema, type Account, type Device, type Message, type MessageType, type User } from '../db/entities/index.ts';
import { prepared } from '../db/prepared.ts';
import { earlierSendsSql, type EarlierSendsRow } from './sql/earlier-sends.ts';
import { snapshot } from '../db/snapshots.ts';
import { AppError } from '../errors.ts';
import { messageNotice, notify } from './notices.ts';
import { GroupCommit, type AtOnce, type GroupCommitOptions, type Written } from '../db/tx/group-commit.ts';
import { mediaOfConversation } from './media.ts';
import { recordUserMessages, type NewMessage, type UserMessage } from './messages.ts';
import { LockedWay } from './locked-way.ts';
import { recordUserMessagesAtOnce } from './messages-at-once.ts';
import { lockUsers } from './users.ts';

export interface ClientMessageInput {
  typeId: typeof MessageType.user | typeof MessageType.userSystem;
  text: string | null;
  media: { id: string; description?: string | null | undefined } | null;
  requestUrl: string | null;
  /** The client's name for the message: a second send with it from the device writes nothing. */
  clientMessageId?: string | null;
}

export interface ClientMessage {
  account: Pick<Account, 'id' | 'identification'>;
  /** The user as the caller read it (its webhook payload shows these; messages-at-once.ts checks them). */
  user: Pick<User, 'id' | 'ownerServiceId' | 'uniqueIdentifier' | 'additionalInformation'>;
  /** Null for a reply by email (email/inbound.ts): its client id is then the user's, not a device's. */
  device: Pick<Device, 'id'> | null;
  input: ClientMessageInput;
  /** Told when the user was found changed since the caller read it (messages-at-once.ts), to read it again. */
  stale?: () => void;
}

/** One writer per node. */
export type ClientMessageWriter = GroupCommit<ClientMessage, NewMessage>;

export function clientMessageWriter(
  options: Omit<GroupCommitOptions<ClientMessage, NewMessage>, 'name' | 'write' | 'atOnce'> & {
    /** The database is one session (the embedded one): batches are written in one statement where they can be (messages-at-once.ts). */
    oneSession: boolean;
  },
): ClientMessageWriter {
  const { oneSession, ...rest } = options;
  const atOnce = new AtOnceClientMessages();
  return new GroupCommit({
    ...rest,
    name: 'client',
    // New messages: answers and delivery outcomes of what was accepted go first (db/tx/turns.ts).
    turn: 'new',
    write: writeClientMessages,
    ...(oneSession ? { atOnce: (batch: readonly ClientMessage[]) => atOnce.writer(batch) } : {}),
  });
}

/** The batches written in one statement (messages-at-once.ts), and what the writer learnt of them. */
class AtOnceClientMessages {
  /** Accounts found with a standby Service: who else hears their messages is judged the locked way (standby.ts). */
  private readonly standby = new LockedWay();

  /**
   * The batch in one statement, unless it has something that needs the locked way
   * (writeClientMessages) first: an upload to check, a reply by email (no device), one client
   * id twice, or an account with a standby Service.
   */
  writer(batch: readonly ClientMessage[]): AtOnce<NewMessage> | null {
    const keys = new Set<string>();
    const now = Date.now();
    for (const { account, device, user, input } of batch) {
      if (input.media !== null || device === null || this.standby.has(account.id, now)) return null;
      if (input.clientMessageId == null) continue;
      const key = clientKey(device.id, user.id, input.clientMessageId);
      if (keys.has(key)) return null;
      keys.add(key);
    }
    return (tx) => this.write(tx, batch, now);
  }

  private async write(tx: Transaction, batch: readonly ClientMessage[], now: number): Promise<Array<Written<NewMessage>> | 'check failed'> {
    const recorded = await recordUserMessagesAtOnce(
      tx,
      batch.map(({ account, user, device, input }) => ({
        account,
        user,
        input: { ...input, media: null, deviceId: device?.id ?? null },
      })),
    );
    if (!Array.isArray(recorded)) {
      this.standby.keep(recorded.standby, now);
      // Their callers read them again for their next message.
      for (const item of batch) if (recorded.stale.includes(item.user.id)) item.stale?.();
      return 'check failed';
    }
    return recorded.map((value): Written<NewMessage> => {
      notify(tx, messageNotice(value.message, value.prevId));
      return { ok: true, value };
    });
  }
}

/**
 * One transaction: the messages whose uploads check out, with their deliveries. A message
 * whose client id its device has sent before (a retry after a lost answer) is answered with
 * the message written then: nothing new is written, delivered or pushed.
 */
async function writeClientMessages(tx: Transaction, batch: readonly ClientMessage[]): Promise<Array<Written<NewMessage>>> {
  const outcomes: Array<Written<NewMessage>> = [];
  const accepted: Array<{ at: number; message: UserMessage }> = [];
  const sentBefore = await earlierSends(tx, batch);
  // The same client id twice in one batch: the later item is answered with the earlier's message.
  const firstAt = new Map<string, number>();
  const repeats: Array<{ at: number; of: number }> = [];
  for (const [at, { account, user, device, input }] of batch.entries()) {
    const key = input.clientMessageId == null ? null : clientKey(device?.id ?? null, user.id, input.clientMessageId);
    const earlier = key === null ? undefined : sentBefore.get(key);
    if (earlier) {
      outcomes[at] = { ok: true, value: { message: earlier, prevId: null } };
      continue;
    }
    const first = key === null ? undefined : firstAt.get(key);
    if (first !== undefined) {
      repeats.push({ at, of: first });
      continue;
    }
    try {
      // Only an upload of this conversation can be sent in it.
      const media = input.media ? await mediaOfConversation(tx, user.id, input.media) : null;
      const text = media ? null : input.text;
      const { typeId, requestUrl, clientMessageId } = input;
      accepted.push({
        at,
        message: { account, user, input: { typeId, text, media, deviceId: device?.id ?? null, requestUrl, clientMessageId } },
      });
      if (key !== null) firstAt.set(key, at);
    } catch (err) {
      // A refusal (media_not_found) is the sender's alone; anything else aborts the transaction.
      if (!(err instanceof AppError)) throw err;
      outcomes[at] = { ok: false, error: err };
    }
  }
  // The batch's last statement: it carries the COMMIT, and what follows only answers the callers.
  const recorded = await recordUserMessages(
    tx,
    accepted.map((a) => a.message),
    { commit: true },
  );
  accepted.forEach(({ at }, i) => {
    const value = recorded[i];
    outcomes[at] = value ? { ok: true, value } : { ok: false, error: new Error('message not recorded') };
    if (value) notify(tx, messageNotice(value.message, value.prevId));
  });
  for (const { at, of } of repeats) {
    const first = outcomes[of];
    outcomes[at] = first?.ok
      ? { ok: true, value: { message: first.value.message, prevId: null } }
      : (first ?? { ok: false, error: new Error('message not recorded') });
  }
  return outcomes;
}

/** A device's client id, or (no device: a reply by email) the user's. */
const clientKey = (deviceId: number | null, userId: number, clientMessageId: string) =>
  deviceId === null ? `u${userId}:${clientMessageId}` : `${deviceId}:${clientMessageId}`;

/**
 * The messages the batch's devices already sent under the batch's client ids, read under the
 * senders' user locks, so a retry racing its first send waits for it and then finds it.
 * Batches without client ids (the Parley clients) cost nothing more.
 */
async function earlierSends(tx: Transaction, batch: readonly ClientMessage[]): Promise<Map<string, Message>> {
  const keyed = batch.filter((item) => item.input.clientMessageId != null);
  const found = new Map<string, Message>();
  if (keyed.length === 0) return found;
  await lockUsers(
    tx,
    keyed.map((item) => item.user.id),
  );
  const rows = await prepared<EarlierSendsRow>(
    tx,
    earlierSendsSql({
      deviceIds: keyed.flatMap((item) => (item.device ? [item.device.id] : [])),
      userIds: keyed.flatMap((item) => (item.device ? [] : [item.user.id])),
      clientMessageIds: keyed.map((item) => item.input.clientMessageId as string),
    }),
  );
  for (const row of rows) {
    const message = snapshot(tx.em.getMetadata(), MessageSchema, row);
    if (message.clientMessageId != null) found.set(clientKey(message.deviceId ?? null, message.userId, message.clientMessageId), message);
  }
  return found;
}
