// How a stored upload goes out over HTTP, to clients and Services alike: its own type, never
// sniffed, never run as a page. Images are shown inline (chat clients put them in <img>);
// documents, audio and video are attachments named after the uploaded file (with the extension
// of their type), so that a browser opening the link downloads it rather than rendering it on
// the API's origin.
import type { Media } from '../db/entities/index.ts';
import { downloadName, servedContentType } from '../media/types.ts';
import type { AppContext } from './types.ts';

export function sendMedia(ctx: AppContext, found: { media: Media; bytes: Buffer }): void {
  const { media, bytes } = found;
  const stored = media.path.split('/').pop() ?? '';
  // Named after the upload, ending in the extension of the type it is served as (rows written
  // before names were corrected at upload included).
  const filename = downloadName(media.description || stored, stored.slice(stored.lastIndexOf('.') + 1));
  ctx.attachment(filename, { type: media.mimeType.startsWith('image/') ? 'inline' : 'attachment' });
  // attachment() sets the type from the name's extension; ours comes from the bytes.
  ctx.type = servedContentType(media.mimeType);
  ctx.set('cache-control', 'private, max-age=86400');
  ctx.set('x-content-type-options', 'nosniff');
  ctx.set('content-security-policy', "default-src 'none'; sandbox");
  ctx.body = bytes;
}
