// Uploads from chat clients and Services: only the types the clients render are kept (see
// media/types.ts for how a type is decided), each kind under its own size cap and the account
// under its storage quota, and the row ties the file to the conversation that uploaded it.
// Uploads no message refers to are swept after a while (media/sweeper.ts).
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MediaSchema, type Account, type Media, type MediaReference, type User } from '../db/entities/index.ts';
import { prepared } from '../db/prepared.ts';
import { AppError, notFound } from '../errors.ts';
import type { MediaStorage } from '../media/storage.ts';
import { classifyUpload, type MediaKind } from '../media/types.ts';
import { lockName } from './locks.ts';
import { lockUsers } from './users.ts';

/** 413, like a file over its kind's cap: the account's uploads together would pass media.storageQuotaBytes. */
const quotaExceeded = () => new AppError(413, 'storage_quota_exceeded');

/** The bytes the account's uploads take (the sum of their sizes). */
async function storageUsed(em: EntityManager, accountId: number): Promise<number> {
  const [row] = await em
    .getConnection()
    .execute<Array<{ used: string | number }>>(
      'select coalesce(sum(size), 0)::bigint as used from media where account_id = ?',
      [accountId],
      'all',
      em.getTransactionContext(),
    );
  return Number(row?.used ?? 0);
}

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
  quotaBytes: number,
): Promise<Media> {
  const type = await classifyUpload(file.bytes, { name: file.originalName, type: file.declaredType });
  if (!type) throw new AppError(415, 'invalid_media_type');
  if (file.bytes.length > maxBytes[type.kind]) throw new AppError(413, 'media_too_large');
  // Checked before anything is stored, and again under the account's quota lock below.
  if ((await storageUsed(em, account.id)) + file.bytes.length > quotaBytes) throw quotaExceeded();
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
  // conversation the merge made, never on the merged-away user. The quota lock (taken last)
  // makes concurrent uploads of one account count each other. A refused or failed row takes
  // its file with it.
  try {
    return await em.transactional(async (tx) => {
      const locked = (await lockUsers(tx, [user.id])).get(user.id);
      await lockName(tx, `media-quota:${account.id}`);
      if ((await storageUsed(tx, account.id)) + file.bytes.length > quotaBytes) throw quotaExceeded();
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
  } catch (err) {
    await storage.delete(account.id, filePath).catch(() => undefined);
    throw err;
  }
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
  // FOR SHARE: the sweeper (media/sweeper.ts) skips an upload a message is being written with.
  // A raw statement: the message writers' held transactions have no ORM (db/held-transaction.ts).
  const [upload] = await prepared<{ path: string; mimeType: string; description: string | null }>(
    em,
    'select path, mime_type as "mimeType", description from media where id = ? and user_id = ? for share',
    [wanted.id, userId],
  );
  if (!upload) throw notFound('media_not_found');
  return { path: upload.path, mimeType: upload.mimeType, description: wanted.description ?? upload.description ?? null };
}
