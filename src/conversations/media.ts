// Uploads from chat clients and Services: only the types the clients render are kept (see
// media/types.ts for how a type is decided), each kind under its own size cap, and the row ties
// the file to the conversation that uploaded it.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MediaSchema, type Account, type Media, type MediaReference, type User } from '../db/entities/index.ts';
import { AppError, notFound } from '../errors.ts';
import type { MediaStorage } from '../media/storage.ts';
import { classifyUpload, type MediaKind } from '../media/types.ts';
import { lockUsers } from './users.ts';

export interface UploadedFile {
  bytes: Buffer;
  /** The file name and part type the uploader declared: believed only where bytes cannot tell. */
  originalName: string | null;
  declaredType: string | null;
}

export async function uploadMedia(
  em: EntityManager,
  storage: MediaStorage,
  account: Account,
  user: User,
  file: UploadedFile,
  maxBytes: Readonly<Record<MediaKind, number>>,
): Promise<Media> {
  const type = await classifyUpload(file.bytes, { name: file.originalName, type: file.declaredType });
  if (!type) throw new AppError(415, 'invalid_media_type');
  if (file.bytes.length > maxBytes[type.kind]) throw new AppError(413, 'media_too_large');
  const now = new Date();
  const id = randomUUID();
  // Unpadded month and day, as in the reference bodies (year "2023", month "6", day "6").
  const filePath = `${now.getUTCFullYear()}/${now.getUTCMonth() + 1}/${now.getUTCDate()}/${id}.${type.extension}`;
  try {
    await storage.put(account.id, filePath, file.bytes);
  } catch (err) {
    throw new AppError(500, 'could_not_save_media', [], null, {}, err);
  }
  // Under the user's lock, like a message: an upload racing a login merge lands on the
  // conversation the merge made, never on the merged-away user.
  return em.transactional(async (tx) => {
    const locked = (await lockUsers(tx, [user.id])).get(user.id);
    return tx.create(MediaSchema, {
      id,
      accountId: account.id,
      userId: locked?.mergedIntoUserId ?? user.id,
      path: filePath,
      mimeType: type.mime,
      size: file.bytes.length,
      description: file.originalName?.slice(0, 255) ?? null,
    });
  });
}

/** The file, if it belongs to this account and (when a user is given) to that conversation. */
export async function readMedia(
  em: EntityManager,
  storage: MediaStorage,
  owner: { accountId: number; userId?: number },
  filePath: string,
): Promise<{ media: Media; bytes: Buffer } | null> {
  const { accountId, userId } = owner;
  const media = await em.findOne(MediaSchema, { accountId, path: filePath, ...(userId === undefined ? {} : { userId }) });
  if (!media) return null;
  const bytes = await storage.get(accountId, filePath);
  return bytes ? { media, bytes } : null;
}

/** A message's reference to an upload, which must belong to the conversation it is sent in. */
export async function mediaOfConversation(
  em: EntityManager,
  userId: number,
  wanted: { id: string; description?: string | null | undefined },
): Promise<MediaReference> {
  const upload = await em.findOne(MediaSchema, { id: wanted.id, userId });
  if (!upload) throw notFound('media_not_found');
  return { path: upload.path, mimeType: upload.mimeType, description: wanted.description ?? upload.description ?? null };
}
