// Small but valid files for uploads, built from bytes so that nothing binary lives in the repo
// and the server's type sniffing meets real headers, not just a magic number.
import { crc32, deflateSync } from 'node:zlib';

function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** A `size`×`size` PNG, 8-bit RGB, a diagonal of `ink` on white (visible in a screenshot). */
export function png(size = 12, ink: [number, number, number] = [0x1f, 0x6f, 0xeb]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: truecolour; compression, filter and interlace stay 0
  const rows: number[] = [];
  for (let y = 0; y < size; y += 1) {
    rows.push(0); // filter: none
    for (let x = 0; x < size; x += 1) rows.push(...(Math.abs(x - y) <= 1 ? ink : [255, 255, 255]));
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(Buffer.from(rows))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A one-page PDF 1.4 with a correct cross-reference table, from %PDF-1.4 to %%EOF. */
export function pdf(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] >>',
  ];
  let text = '%PDF-1.4\n';
  const offsets = objects.map((object, i) => {
    const at = text.length; // ASCII only, so characters are bytes
    text += `${i + 1} 0 obj\n${object}\nendobj\n`;
    return at;
  });
  const xref = text.length;
  text += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const at of offsets) text += `${String(at).padStart(10, '0')} 00000 n \n`;
  text += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(text, 'latin1');
}
