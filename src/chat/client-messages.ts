// A message sent by a chat client (REST or socket): text, a user system message, or an
// image uploaded before with POST /media. Stored and delivered to the owner in one transaction.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MediaSchema, type Account, type Device, type Message, type User } from '../db/entities/index.ts';
import { notFound } from '../http/errors.ts';
import { recordUserMessage } from './messages.ts';

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
): Promise<Message> {
  return em.transactional(async (tx) => {
    let media = null;
    if (input.media) {
      // Only an upload of this conversation can be sent in it.
      const upload = await tx.findOne(MediaSchema, { id: input.media.id, userId: user.id });
      if (!upload) throw notFound('media_not_found');
      media = { path: upload.path, mimeType: upload.mimeType, description: input.media.description ?? upload.description ?? null };
    }
    return recordUserMessage(tx, account, user, {
      typeId: input.typeId,
      text: media ? null : input.text,
      media,
      deviceId: device.id,
      requestUrl: input.requestUrl,
    });
  });
}
