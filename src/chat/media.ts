// Uploads from chat clients: the type is decided by the file's bytes (never by its name or
// the declared type), only allow-listed images are kept, and the row ties the file to the
// conversation that uploaded it.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { fileTypeFromBuffer } from 'file-type';
import { MediaSchema, type Account, type Media, type MediaReference, type User } from '../db/entities/index.ts';
import { AppError, notFound } from '../http/errors.ts';
import type { MediaStorage } from '../media/storage.ts';

export const ALLOWED_MEDIA_TYPES: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

export async function uploadMedia(
  em: EntityManager,
  storage: MediaStorage,
  account: Account,
  user: User,
  file: { bytes: Buffer; originalName: string | null },
): Promise<Media> {
  const detected = await fileTypeFromBuffer(file.bytes);
  const extension = detected ? ALLOWED_MEDIA_TYPES[detected.mime] : undefined;
  if (!detected || !extension) throw new AppError(415, 'invalid_media_type');
  const now = new Date();
  const id = randomUUID();
  // Unpadded month and day, as in the reference bodies (year "2023", month "6", day "6").
  const filePath = `${now.getUTCFullYear()}/${now.getUTCMonth() + 1}/${now.getUTCDate()}/${id}.${extension}`;
  await storage.put(account.id, filePath, file.bytes);
  const media = em.create(MediaSchema, {
    id,
    accountId: account.id,
    userId: user.id,
    path: filePath,
    mimeType: detected.mime,
    size: file.bytes.length,
    description: file.originalName?.slice(0, 255) ?? null,
  });
  await em.flush();
  return media;
}

/** The file, if it belongs to this conversation. */
export async function readMedia(
  em: EntityManager,
  storage: MediaStorage,
  account: Account,
  user: User,
  filePath: string,
): Promise<{ media: Media; bytes: Buffer } | null> {
  const media = await em.findOne(MediaSchema, { accountId: account.id, path: filePath, userId: user.id });
  if (!media) return null;
  const bytes = await storage.get(account.id, filePath);
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
