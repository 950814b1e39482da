// Uploads from chat clients and Services: only the types the clients render are kept (see
// media/types.ts for how a type is decided), each kind under its own size cap, the account under
// its storage quota, and a conversation's visitors and each device under a quota per window of
// time, so that one visitor cannot fill the account's storage for everyone. The row ties the file
// to the conversation (and device) that uploaded it. Uploads no message refers to are swept after
// a while (media/sweeper.ts).
//
// Everything that can refuse an upload is judged before any lock: the quotas before a byte of
// the body is read (uploadAllowance), the type and size from the received file. Only a file that
// will be kept waits for the conversation's lock, and not for long (UPLOAD_LOCK_TIMEOUT_MS).
import type { Transaction } from '../db/tx/transaction.ts';
import { randomUUID } from 'node:crypto';
import { DriverException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MediaSchema, type Account, type Media, type MediaReference, type User } from '../db/entities/index.ts';
import { prepared } from '../db/prepared.ts';
import { AppError, notFound } from '../errors.ts';
import type { MediaStorage } from '../media/storage.ts';
import { classifyUpload, downloadName, type MediaKind } from '../media/types.ts';
import { lockName } from './locks.ts';
import { lockUsers } from './users.ts';

/** The storage quota of an account and the window quotas of its conversations and devices (config `media`). */
export interface UploadQuotas {
  storageQuotaBytes: number;
  quotaWindowSeconds: number;
  conversationQuotaBytes: number;
  deviceQuotaBytes: number;
}

/** Who uploads: a device of a conversation (Client API), or a Service into a conversation (deviceId null). */
export interface Uploader {
  account: Readonly<Account>;
  user: Readonly<User>;
  deviceId: number | null;
}

/** A received upload, in a temporary file that storage takes over (or that is removed after the call). */
export interface UploadedFile {
  path: string;
  size: number;
  /** The file name and part type the uploader declared: believed only where bytes cannot tell. */
  originalName: string | null;
  declaredType: string | null;
}

/** How long a file that will be kept waits for each of its locks (conversation, account quota) before 503 conversation_busy. */
const UPLOAD_LOCK_TIMEOUT_MS = 1000;

type Scope = 'account' | 'conversation' | 'device';

interface Limit {
  scope: Scope;
  bytes: number;
  used: number;
}

/**
 * The bytes the account's uploads take, and those the conversation's visitors and the device
 * uploaded within the window (a Service's uploads count for the account only), in one statement.
 */
async function usage(em: EntityManager, uploader: Uploader, quotas: UploadQuotas): Promise<Limit[]> {
  const [row] = await em.getConnection().execute<Array<{ account: string; conversation: string; device: string }>>(
    `select
       (select coalesce(sum(size), 0) from media where account_id = ?)::bigint as account,
       (select coalesce(sum(size), 0) from media
         where user_id = ? and device_id is not null and created_at > now() - (? * interval '1 second'))::bigint as conversation,
       (select coalesce(sum(size), 0) from media
         where device_id = ? and created_at > now() - (? * interval '1 second'))::bigint as device`,
    [uploader.account.id, uploader.user.id, quotas.quotaWindowSeconds, uploader.deviceId ?? 0, quotas.quotaWindowSeconds],
    'all',
    em.getTransactionContext(),
  );
  const limits: Limit[] = [{ scope: 'account', bytes: quotas.storageQuotaBytes, used: Number(row?.account ?? 0) }];
  if (uploader.deviceId !== null) {
    limits.push({ scope: 'conversation', bytes: quotas.conversationQuotaBytes, used: Number(row?.conversation ?? 0) });
    limits.push({ scope: 'device', bytes: quotas.deviceQuotaBytes, used: Number(row?.device ?? 0) });
  }
  return limits;
}

/**
 * When enough of the window's uploads of that scope have aged out for `size` more bytes to fit:
 * seconds from now. The whole window when the file would not fit even into an empty one.
 */
async function secondsUntilFree(em: EntityManager, uploader: Uploader, quotas: UploadQuotas, limit: Limit, size: number): Promise<number> {
  const window = quotas.quotaWindowSeconds;
  if (size > limit.bytes) return window;
  const where = limit.scope === 'device' ? 'device_id = ?' : 'user_id = ? and device_id is not null';
  const rows = await em.getConnection().execute<Array<{ size: number; freesIn: number }>>(
    `select size, extract(epoch from created_at + (? * interval '1 second') - now())::float8 as "freesIn"
       from media where ${where} and created_at > now() - (? * interval '1 second')
      order by created_at, id`,
    [window, limit.scope === 'device' ? uploader.deviceId : uploader.user.id, window],
    'all',
    em.getTransactionContext(),
  );
  let stillUsed = limit.used;
  for (const row of rows) {
    stillUsed -= Number(row.size);
    if (stillUsed + size <= limit.bytes) return Math.max(1, Math.ceil(Number(row.freesIn)));
  }
  return window;
}

const WINDOW_CODES: Readonly<Record<Exclude<Scope, 'account'>, string>> = {
  conversation: 'conversation_upload_quota_exceeded',
  device: 'device_upload_quota_exceeded',
};

/**
 * The answer when `size` more bytes do not fit under `limit`. The account's quota frees up only
 * when uploads are deleted: 413 storage_quota_exceeded, as before. A window quota frees up with
 * time: 429 with its own code and Retry-After, the notification saying the quota and when.
 */
async function refusal(em: EntityManager, uploader: Uploader, quotas: UploadQuotas, limit: Limit, size: number): Promise<AppError> {
  if (limit.scope === 'account') {
    const detail = `the account's uploads may take ${limit.bytes} bytes; ${limit.used} are taken`;
    return new AppError(413, 'storage_quota_exceeded', [{ type: 'error', message: 'storage_quota_exceeded', detail }]);
  }
  const retryAfter = await secondsUntilFree(em, uploader, quotas, limit, size);
  const code = WINDOW_CODES[limit.scope];
  const detail = `${limit.bytes} bytes per ${limit.scope} per ${quotas.quotaWindowSeconds} s; ${limit.used} uploaded; frees up in ${retryAfter} s`;
  return new AppError(429, code, [{ type: 'error', message: code, detail }], null, { 'retry-after': String(retryAfter) });
}

/** The first limit that `size` more bytes would pass. */
const exceeded = (limits: Limit[], size: number) => limits.find((l) => l.used + size > l.bytes);

export interface UploadAllowance {
  /** The largest file this upload may bring: the largest kind's cap, or less where a quota leaves less. */
  maxBytes: number;
  /** The answer for a file that turned out larger than maxBytes while it streamed. */
  overCap(): Promise<AppError>;
}

/**
 * Judged before a byte of the body is read: refused when not even the smallest file the
 * declared length could hold fits under a quota; otherwise the most the file may take.
 */
export async function uploadAllowance(
  em: EntityManager,
  uploader: Uploader,
  quotas: UploadQuotas,
  declared: { smallestFileBytes: number; largestFileBytes: number },
): Promise<UploadAllowance> {
  const limits = await usage(em, uploader, quotas);
  const over = exceeded(limits, declared.smallestFileBytes);
  if (over) throw await refusal(em, uploader, quotas, over, declared.smallestFileBytes);
  const tightest = limits.reduce((a, b) => (b.bytes - b.used < a.bytes - a.used ? b : a));
  const left = tightest.bytes - tightest.used;
  if (left >= declared.largestFileBytes) {
    return { maxBytes: declared.largestFileBytes, overCap: () => Promise.resolve(new AppError(413, 'media_too_large')) };
  }
  return { maxBytes: left, overCap: () => refusal(em, uploader, quotas, tightest, left + 1) };
}

export async function uploadMedia(
  em: EntityManager,
  storage: MediaStorage,
  uploader: Uploader,
  file: UploadedFile,
  maxBytes: Readonly<Record<MediaKind, number>>,
  quotas: UploadQuotas,
): Promise<Media> {
  const { account, user } = uploader;
  const type = await classifyUpload(file.path, { name: file.originalName, type: file.declaredType });
  if (!type) throw new AppError(415, 'invalid_media_type');
  if (file.size > maxBytes[type.kind]) throw new AppError(413, 'media_too_large');
  const now = new Date();
  const id = randomUUID();
  // Unpadded month and day, as in the reference bodies (year "2023", month "6", day "6").
  const filePath = `${now.getUTCFullYear()}/${now.getUTCMonth() + 1}/${now.getUTCDate()}/${id}.${type.extension}`;
  try {
    await storage.put(account.id, filePath, file.path);
  } catch (err) {
    throw new AppError(500, 'could_not_save_media', [], null, {}, err);
  }
  // Under the user's lock, like a message: an upload racing a login merge lands on the
  // conversation the merge made, never on the merged-away user. The quota lock (taken last)
  // makes concurrent uploads of one account count each other, checked again here. A refused or
  // failed row takes its file with it.
  try {
    return await em.transactional(async (tx) => {
      // A conversation held for long (a merge, a long writer), or a queue of the account's uploads
      // at the quota lock, answers 503 rather than keeping the upload waiting: both locks are bounded.
      await tx.getConnection().execute(`set local lock_timeout = ${UPLOAD_LOCK_TIMEOUT_MS}`, [], 'run', tx.getTransactionContext());
      const locked = (await lockUsers(tx, [user.id])).get(user.id);
      await lockName(tx, `media-quota:${account.id}`);
      const limits = await usage(tx, uploader, quotas);
      const over = exceeded(limits, file.size);
      if (over) throw await refusal(tx, uploader, quotas, over, file.size);
      return tx.create(MediaSchema, {
        id,
        accountId: account.id,
        userId: locked?.mergedIntoUserId ?? user.id,
        deviceId: uploader.deviceId,
        path: filePath,
        mimeType: type.mime,
        size: file.size,
        // The name it is downloaded under ends in the extension of what its bytes are.
        description: file.originalName ? downloadName(file.originalName, type.extension) : null,
      });
    });
  } catch (err) {
    await storage.delete(account.id, filePath).catch(() => undefined);
    if (err instanceof DriverException && (err as DriverException & { code?: string }).code === '55P03') {
      throw new AppError(503, 'conversation_busy', [], null, { 'retry-after': '1' });
    }
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
  em: EntityManager | Transaction,
  userId: number,
  wanted: { id: string; description?: string | null | undefined },
): Promise<MediaReference> {
  // FOR SHARE: the sweeper (media/sweeper.ts) skips an upload a message is being written with.
  // A raw statement: the message writers' held transactions have no ORM (db/tx/held.ts).
  const [upload] = await prepared<{ path: string; mimeType: string; description: string | null }>(
    em,
    'select path, mime_type as "mimeType", description from media where id = ? and user_id = ? for share',
    [wanted.id, userId],
  );
  if (!upload) throw notFound('media_not_found');
  return { path: upload.path, mimeType: upload.mimeType, description: wanted.description ?? upload.description ?? null };
}
