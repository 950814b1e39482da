// The chat widget's size as sites download it: dist/web/widget.js built afresh, gzipped at the
// level servers and CDNs use for static files, beside the budget of 45 KB (Socket.IO client included).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildWeb, webOutDir } from '../build-web.ts';
import { progress, type Metric } from './support.ts';

const BUDGET_BYTES = 45 * 1024;

export async function benchWidgetSize(): Promise<Metric> {
  await buildWeb();
  const script = readFileSync(path.join(webOutDir, 'widget.js'));
  const gzipped = gzipSync(script, { level: 9 }).length;
  progress(`widget.js: ${script.length} bytes, ${gzipped} gzipped (budget ${BUDGET_BYTES})`);
  return {
    value: gzipped,
    unit: 'B gzip',
    baseline: BUDGET_BYTES,
    ratio: Math.round((gzipped / BUDGET_BYTES) * 100) / 100,
    raw: script.length,
  };
}
