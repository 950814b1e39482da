// Where uploaded bytes live. The database row says whose a file is; storage only keeps bytes.
// A small interface so that an object store can stand in for the disk later.
import { copyFile, mkdir, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

export interface MediaStorage {
  /** Takes the file at `source` (an upload's temporary file, gone afterwards) as `filePath`. */
  put(accountId: number, filePath: string, source: string): Promise<void>;
  /** null when there is no such file. */
  get(accountId: number, filePath: string): Promise<Buffer | null>;
  /** Gone afterwards; a file already gone is no error. */
  delete(accountId: number, filePath: string): Promise<void>;
}

/**
 * Files under <root>/<accountId>/<year>/<month>/<day>/<file>. An upload's temporary file is
 * renamed into place (copied to a temporary name, then renamed, when it is on another file system).
 */
export class DiskMediaStorage implements MediaStorage {
  constructor(private readonly root: string) {}

  async put(accountId: number, filePath: string, source: string): Promise<void> {
    const target = this.resolve(accountId, filePath);
    await mkdir(path.dirname(target), { recursive: true });
    try {
      await rename(source, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      const temporary = `${target}.part`;
      await copyFile(source, temporary);
      await rename(temporary, target);
      await unlink(source);
    }
  }

  async get(accountId: number, filePath: string): Promise<Buffer | null> {
    try {
      return await readFile(this.resolve(accountId, filePath));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(accountId: number, filePath: string): Promise<void> {
    try {
      await unlink(this.resolve(accountId, filePath));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  private resolve(accountId: number, filePath: string): string {
    const target = path.resolve(this.root, String(accountId), filePath);
    // Paths come from our own rows, but a path that leaves the account's folder is never served.
    if (!target.startsWith(path.resolve(this.root, String(accountId)) + path.sep)) throw new Error('bad media path');
    return target;
  }
}
