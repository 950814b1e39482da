// Which uploads Palaver keeps: the types the Parley web, Android and iOS clients render, each
// decided from the file's bytes where the format has a signature. A name or declared type is
// only believed where the bytes cannot tell (old Office files share one container; plain text
// has no signature), and then only after the bytes pass a check of their own.
import { createReadStream } from 'node:fs';
import { fileTypeFromFile } from 'file-type';

export type MediaKind = 'image' | 'document' | 'audio' | 'video';

export interface MediaType {
  /** What the file is stored and served as: a type the clients list as renderable. */
  mime: string;
  extension: string;
  kind: MediaKind;
}

const type = (kind: MediaKind, mime: string, extension: string): MediaType => ({ kind, mime, extension });

/**
 * Detected type → what we store. Left out on purpose: WebP, AVIF, HEIC, SVG and other images
 * (the web client cannot show them), archives, executables and anything else.
 */
const BY_SIGNATURE: Readonly<Record<string, MediaType>> = {
  'image/png': type('image', 'image/png', 'png'),
  'image/jpeg': type('image', 'image/jpeg', 'jpg'),
  'image/gif': type('image', 'image/gif', 'gif'),
  'application/pdf': type('document', 'application/pdf', 'pdf'),
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': type(
    'document',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'docx',
  ),
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': type(
    'document',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'xlsx',
  ),
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': type(
    'document',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    'pptx',
  ),
  'audio/mpeg': type('audio', 'audio/mpeg', 'mp3'),
  'audio/ogg': type('audio', 'audio/ogg', 'ogg'),
  'audio/ogg; codecs=opus': type('audio', 'audio/ogg', 'opus'),
  'audio/wav': type('audio', 'audio/wav', 'wav'),
  'audio/aac': type('audio', 'audio/aac', 'aac'),
  'audio/aiff': type('audio', 'audio/aiff', 'aiff'),
  'audio/midi': type('audio', 'audio/midi', 'mid'),
  'video/mp4': type('video', 'video/mp4', 'mp4'),
  'video/x-m4v': type('video', 'video/mp4', 'mp4'),
  'video/webm': type('video', 'video/webm', 'webm'),
  'video/quicktime': type('video', 'video/quicktime', 'mov'),
  'video/mpeg': type('video', 'video/mpeg', 'mpeg'),
  'video/ogg': type('video', 'video/ogg', 'ogv'),
  'video/3gpp': type('video', 'video/3gpp', '3gp'),
  'video/3gpp2': type('video', 'video/3gpp2', '3g2'),
  'video/vnd.avi': type('video', 'video/x-msvideo', 'avi'),
  'video/x-flv': type('video', 'video/x-flv', 'flv'),
  'video/mp2t': type('video', 'video/mp2t', 'ts'),
  'video/x-ms-asf': type('video', 'video/x-ms-asf', 'asf'),
};

/** Word, Excel and PowerPoint before 2007 are all one "compound file" container. */
const COMPOUND_FILES: Readonly<Record<string, MediaType>> = {
  doc: type('document', 'application/msword', 'doc'),
  xls: type('document', 'application/vnd.ms-excel', 'xls'),
  ppt: type('document', 'application/vnd.ms-powerpoint', 'ppt'),
};

const TEXT_FILES: Readonly<Record<string, MediaType>> = {
  txt: type('document', 'text/plain', 'txt'),
  csv: type('document', 'text/csv', 'csv'),
};

const DECLARED_EXTENSION: Readonly<Record<string, string>> = {
  'application/msword': 'doc',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.ms-powerpoint': 'ppt',
  'text/plain': 'txt',
  'text/csv': 'csv',
};

/** The extension the uploader claims, from the file name or else the part's declared type. */
function claimedExtension(declared: { name: string | null; type: string | null }): string | undefined {
  const fromName = /\.([A-Za-z0-9]{1,8})$/.exec(declared.name ?? '')?.[1]?.toLowerCase();
  return fromName ?? DECLARED_EXTENSION[(declared.type ?? '').split(';')[0]?.trim().toLowerCase() ?? ''];
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/;

/**
 * Plain text: valid UTF-8 with no control characters but tab, line breaks and form feed.
 * It is served as text/plain with nosniff and as an attachment, so markup inside stays text.
 * Read in chunks: a text file is as large as a document may be.
 */
async function isPlainText(filePath: string): Promise<boolean> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let empty = true;
  try {
    for await (const chunk of createReadStream(filePath, { highWaterMark: 64 * 1024 })) {
      empty = false;
      if (CONTROL.test(decoder.decode(chunk as Buffer, { stream: true }))) return false;
    }
    // A sequence cut off at the end throws here.
    return !empty && !CONTROL.test(decoder.decode());
  } catch {
    return false;
  }
}

/**
 * file-type's guess from the file's first bytes (it reads only what the format needs);
 * 'undecodable' when the bytes start like a format and then break off or contradict it (a
 * PNG signature alone throws EndOfStreamError): no file the clients render.
 */
async function detect(filePath: string): Promise<Awaited<ReturnType<typeof fileTypeFromFile>> | 'undecodable'> {
  try {
    return await fileTypeFromFile(filePath);
  } catch {
    return 'undecodable';
  }
}

/** The type Palaver keeps the upload as, or null when it is not one the clients render (or broken). */
export async function classifyUpload(filePath: string, declared: { name: string | null; type: string | null }): Promise<MediaType | null> {
  const detected = await detect(filePath);
  if (detected === 'undecodable') return null;
  if (detected) {
    if (detected.mime === 'application/x-cfb') return COMPOUND_FILES[claimedExtension(declared) ?? ''] ?? null;
    return BY_SIGNATURE[detected.mime] ?? null;
  }
  const text = TEXT_FILES[claimedExtension(declared) ?? ''];
  return text && (await isPlainText(filePath)) ? text : null;
}

/** Other spellings of a stored extension that a file name may keep. */
const SAME_EXTENSION: Readonly<Record<string, readonly string[]>> = {
  jpg: ['jpeg', 'jpe'],
  mid: ['midi'],
  aiff: ['aif'],
  mpeg: ['mpg'],
  mp4: ['m4v'],
  ogg: ['oga'],
};

/**
 * The name a file is offered for download under: the uploader's name ending in the extension of
 * the type its bytes were stored as, so that the saved file opens as what it is
 * (`statement.html` holding a PDF becomes `statement.pdf`, `invoice.hta.` becomes
 * `invoice.pdf`). Trailing dots and spaces, which Windows drops, are dropped first.
 */
export function downloadName(name: string | null, extension: string, maxLength = 255): string {
  const trailing = /[.\s]+$/;
  // eslint-disable-next-line no-control-regex
  const trimmed = (name ?? '').replace(/[\u0000-\u001f\u007f]/g, '').replace(trailing, '');
  const dot = trimmed.lastIndexOf('.');
  const current = dot > 0 ? trimmed.slice(dot + 1) : '';
  const lower = current.toLowerCase();
  const keep = lower === extension || (SAME_EXTENSION[extension]?.includes(lower) ?? false);
  const ext = keep ? current : extension;
  // Counted in code points, as the column is, so that no surrogate pair is cut in two.
  const stem = Array.from(dot > 0 ? trimmed.slice(0, dot) : trimmed)
    .slice(0, maxLength - ext.length - 1)
    .join('')
    .replace(trailing, '');
  return `${stem || 'file'}.${ext}`;
}

/** The Content-Type a stored file is served with. */
export function servedContentType(mime: string): string {
  return mime.startsWith('text/') ? `${mime}; charset=utf-8` : mime;
}
