// A message sent by a chat client (REST or socket): text, a user system message, or an
// image uploaded before with POST /media. Stored and delivered to the owner in one transaction.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account, Device, User } from '../db/entities/index.ts';
import { mediaOfConversation } from './media.ts';
import { recordUserMessage, type NewMessage } from './messages.ts';

export interface ClientMessageInput {
  typeId: 1 | 4;
  text: string | null;
  media: { id: string; description?: string | null | undefined } | null;
  requestUrl: string | null;
}

export async function sendClientMessage(
  em: EntityManager,
  account: Account,
  user: User,
  device: Device,
  input: ClientMessageInput,
): Promise<NewMessage> {
  return em.transactional(async (tx) => {
    // Only an upload of this conversation can be sent in it.
    const media = input.media ? await mediaOfConversation(tx, user.id, input.media) : null;
    return recordUserMessage(tx, account, user, {
      typeId: input.typeId,
      text: media ? null : input.text,
      media,
      deviceId: device.id,
      requestUrl: input.requestUrl,
    });
  });
}
