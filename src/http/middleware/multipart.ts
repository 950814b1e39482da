// Uploads: multipart/form-data with one file. What can be judged before the body is read is
// (the type of body, its declared length, and with it the quotas: conversations/media.ts);
// the file part is then streamed by koa-body (formidable) into a temporary file, its cap
// enforced while it streams, so no upload is ever held in memory. Each request's temporary
// files live in a folder of its own under <dataDir>/uploads, removed whatever the outcome.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { koaBody } from 'koa-body';
import { uploadAllowance, uploadMedia, type UploadAllowance, type UploadedFile, type Uploader } from '../../conversations/media.ts';
import type { Media } from '../../db/entities/index.ts';
import type { MediaKind } from '../../media/types.ts';
import { AppError } from '../../errors.ts';
import { checkStorable } from '../../validation.ts';
import { refuseDeclaredLength } from './body.ts';
import type { AppContext } from '../types.ts';

/** Boundaries, part headers and small fields beside the file: 64 KiB of them at most. */
const PART_OVERHEAD_BYTES = 64 * 1024;

/** formidable's codes for a file over maxFileSize / maxTotalFileSize. */
const FILE_TOO_LARGE = new Set([1009, 1016]);

/** The temporary folder of uploads being received. */
export const uploadsDir = (dataDir: string) => path.resolve(dataDir, 'uploads');

export interface DeclaredUpload {
  /** The least the file can be, given the declared Content-Length (1 when none is declared). */
  smallestFileBytes: number;
  /** The largest file of any kind: the kind is known only from the bytes. */
  largestFileBytes: number;
}

/**
 * Judged before a byte of the body is read: multipart (415 multipart_required), and a declared
 * length within the largest cap (413 media_too_large).
 */
export function declaredUpload(ctx: AppContext, largestFileBytes: number): DeclaredUpload {
  if (!ctx.request.is('multipart')) throw new AppError(415, 'multipart_required');
  refuseDeclaredLength(ctx, largestFileBytes + PART_OVERHEAD_BYTES, 'media_too_large');
  const declared = Number(ctx.get('content-length') || Number.NaN);
  const smallestFileBytes = Number.isFinite(declared) ? Math.max(1, declared - PART_OVERHEAD_BYTES) : 1;
  return { smallestFileBytes, largestFileBytes };
}

/**
 * Streams the named file part to a temporary file of at most `allowance.maxBytes` and hands it
 * to `use` (422 missing_media, the code clients show a text for, when the field is missing);
 * the temporary folder is removed afterwards, whether `use` took the file over or not.
 */
export async function receiveFile<T>(
  ctx: AppContext,
  field: string,
  allowance: UploadAllowance,
  use: (file: UploadedFile) => Promise<T>,
): Promise<T> {
  const parent = uploadsDir(ctx.deps.config.dataDir);
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(path.join(parent, 'incoming-'));
  try {
    const parse = koaBody({
      multipart: true,
      json: false,
      urlencoded: false,
      text: false,
      formidable: {
        uploadDir: dir,
        maxFiles: 1,
        maxFileSize: allowance.maxBytes,
        maxTotalFileSize: allowance.maxBytes,
        // Fields beside the file are held in memory: a few small ones at most.
        maxFields: 20,
        maxFieldsSize: PART_OVERHEAD_BYTES,
        allowEmptyFiles: false,
      },
    });
    try {
      await parse(ctx, () => Promise.resolve());
    } catch (err) {
      if (FILE_TOO_LARGE.has(Number((err as { code?: unknown }).code))) throw await allowance.overCap();
      const status = (err as { httpCode?: number; status?: number }).httpCode ?? (err as { status?: number }).status;
      if (status === 413) throw new AppError(413, 'media_too_large');
      throw new AppError(400, 'invalid_multipart');
    }
    const files = ctx.request.files?.[field];
    const file = Array.isArray(files) ? files[0] : files;
    if (!file) throw new AppError(422, 'missing_media');
    // The file name becomes the media's description: no NUL or lone surrogate reaches SQL.
    checkStorable(file.originalFilename ?? null, `${field}.filename`);
    return await use({
      path: file.filepath,
      size: file.size,
      originalName: file.originalFilename ?? null,
      declaredType: file.mimetype ?? null,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * An upload into a conversation, the one path of every API that takes files: the declared
 * length before anything (declaredUpload), then who uploads (`uploader`, which may refuse:
 * an unknown user), the quotas before a byte of the body is read, then the body streamed under
 * the cap left and kept by uploadMedia (type, size, the conversation's lock).
 */
export async function receiveUpload(
  ctx: AppContext,
  maxBytes: Readonly<Record<MediaKind, number>>,
  uploader: () => Promise<Uploader>,
): Promise<Media> {
  const declared = declaredUpload(ctx, Math.max(...Object.values(maxBytes)));
  const who = await uploader();
  const em = ctx.deps.db.orm.em;
  const allowance = await uploadAllowance(em, who, ctx.deps.config.media, declared);
  return receiveFile(ctx, 'media', allowance, (file) => uploadMedia(em, ctx.deps.media, who, file, maxBytes, ctx.deps.config.media));
}
