// The smallest files of each kind that a type detector recognises by its bytes, made here so
// that tests need no binary fixtures: what the chat clients upload, and what must be refused.
import { deflateRawSync } from 'node:zlib';

// A 1×1 PNG.
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

export const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n2 0 obj <</Type /Pages /Kids [] /Count 0>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n',
  'latin1',
);

/** A zip archive with one entry: enough for the Office Open XML formats (word/, xl/, ppt/). */
export function zipWith(entryName: string, content = '<?xml version="1.0"?><document/>'): Buffer {
  const name = Buffer.from(entryName, 'utf8');
  const data = deflateRawSync(Buffer.from(content, 'utf8'));
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0); // local file header
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(8, 8); // deflate
  header.writeUInt32LE(data.length, 18);
  header.writeUInt32LE(Buffer.byteLength(content), 22);
  header.writeUInt16LE(name.length, 26);
  return Buffer.concat([header, name, data]);
}

export const DOCX = zipWith('word/document.xml');

/** An old-style Office file: the compound file container, whose kind only the name tells. */
export const COMPOUND_FILE = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(504)]);

/** RIFF … WEBP: a type the web client cannot show. */
export const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(24)]);

/** An MPEG-1 Layer III frame header followed by silence. */
export const MP3 = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(413)]);

/** An ISO base media file whose major brand is isom: an MP4 video. */
export const MP4 = Buffer.concat([
  Buffer.from([0, 0, 0, 0x18]),
  Buffer.from('ftypisom'),
  Buffer.from([0, 0, 2, 0]),
  Buffer.from('isomiso2'),
  Buffer.alloc(64),
]);

export const CSV = Buffer.from('order,total\n1001,19.95\n1002,5.00\n', 'utf8');

export const TEXT = Buffer.from('Order 1001 arrived damaged.\nPhotos attached separately.\n', 'utf8');
