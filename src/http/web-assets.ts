// The browser bundles built into dist/web (scripts/build-web.ts), read from disk once and again
// only when a rebuild changed the file, with what caches and Subresource Integrity need: an ETag,
// a short content hash for immutable addresses, and the sha384 integrity value.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export const WEB_DIST = path.resolve(import.meta.dirname, '..', '..', 'dist', 'web');

export interface WebAsset {
  body: Buffer;
  /** 12 hex digits of the content's SHA-256: the immutable address of this exact build. */
  hash: string;
  etag: string;
  /** `sha384-…`, for a script tag's `integrity` attribute. */
  integrity: string;
}

export class WebAssets {
  private readonly cache = new Map<string, { mtimeMs: number; asset: WebAsset }>();

  constructor(private readonly dir: string = WEB_DIST) {}

  /** The built file, or undefined when it has not been built (`npm run build:web`). */
  get(name: string): WebAsset | undefined {
    const file = path.join(this.dir, name);
    let mtimeMs: number;
    try {
      mtimeMs = statSync(file).mtimeMs;
    } catch {
      return undefined;
    }
    const cached = this.cache.get(name);
    if (cached?.mtimeMs === mtimeMs) return cached.asset;
    const body = readFileSync(file);
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
    const asset: WebAsset = {
      body,
      hash,
      etag: `"${hash}"`,
      integrity: `sha384-${createHash('sha384').update(body).digest('base64')}`,
    };
    this.cache.set(name, { mtimeMs, asset });
    return asset;
  }
}
