// Where uploaded bytes live. The database row says whose a file is; storage only keeps bytes.
// A small interface so that an object store can stand in for the disk later.
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface MediaStorage {
  put(accountId: number, filePath: string, bytes: Buffer): Promise<void>;
  /** null when there is no such file. */
  get(accountId: number, filePath: string): Promise<Buffer | null>;
  /** Gone afterwards; a file already gone is no error. */
  delete(accountId: number, filePath: string): Promise<void>;
}

/** Files under <root>/<accountId>/<year>/<month>/<day>/<file>; written to a temporary name, then renamed. */
export class DiskMediaStorage implements MediaStorage {
  constructor(private readonly root: string) {}

  async put(accountId: number, filePath: string, bytes: Buffer): Promise<void> {
    const target = this.resolve(accountId, filePath);
    await mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.part`;
    await writeFile(temporary, bytes);
    await rename(temporary, target);
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
