// Uploads: multipart/form-data with one file, parsed by koa-body (formidable) for the routes
// that take files, with their temporary files always removed afterwards.
import { readFile, rm } from 'node:fs/promises';
import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import type { UploadedFile } from '../../conversations/media.ts';
import { AppError } from '../../errors.ts';
import { checkStorable } from '../../validation.ts';
import { refuseDeclaredLength } from './body.ts';
import type { AppContext, AppContextExtras, AppState } from '../types.ts';

/**
 * multipart/form-data with one file; a file over the cap is media_too_large, not a generic 413.
 * The cap here is the largest of the per-kind caps: the kind is known only from the bytes.
 */
export function multipart(maxBytes: number): Middleware<AppState, AppContextExtras> {
  const parse = koaBody({
    multipart: true,
    json: false,
    urlencoded: false,
    text: false,
    formidable: { maxFiles: 1, maxFileSize: maxBytes, maxTotalFileSize: maxBytes, allowEmptyFiles: false },
  });
  return async (ctx, next) => {
    if (!ctx.request.is('multipart')) throw new AppError(415, 'multipart_required');
    // Part headers and boundaries come on top of the file: 64 KiB of them at most.
    refuseDeclaredLength(ctx, maxBytes + 64 * 1024, 'media_too_large');
    try {
      await parse(ctx, () => Promise.resolve());
    } catch (err) {
      const status = (err as { httpCode?: number; status?: number }).httpCode ?? (err as { status?: number }).status;
      if (status === 413) throw new AppError(413, 'media_too_large');
      throw new AppError(400, 'invalid_multipart');
    }
    await next();
  };
}

/** Hands the named file's bytes to `use`; 422 missing_media (the code clients show a text for) when the field is missing. */
export async function withUploadedFile<T>(ctx: AppContext, field: string, use: (file: UploadedFile) => Promise<T>): Promise<T> {
  try {
    const files = ctx.request.files?.[field];
    const file = Array.isArray(files) ? files[0] : files;
    if (!file) throw new AppError(422, 'missing_media');
    // The file name becomes the media's description: no NUL or lone surrogate reaches SQL.
    checkStorable(file.originalFilename ?? null, `${field}.filename`);
    return await use({
      bytes: await readFile(file.filepath),
      originalName: file.originalFilename ?? null,
      declaredType: file.mimetype ?? null,
    });
  } finally {
    // formidable's temporary files are ours to remove.
    const all = Object.values(ctx.request.files ?? {}).flat();
    await Promise.all(all.map((f) => rm(f.filepath, { force: true })));
  }
}
