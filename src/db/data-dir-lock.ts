// PGlite's files must be opened by one process at a time; a second opener corrupts them.
// A lock file naming the owner's pid guards the data directory; a dead owner's lock is stale.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The data directory ${dataDir} is in use by process ${pid} (a running Palaver?). ` +
        'Stop it first, or point PALAVER_DATA_DIR elsewhere.',
    );
    this.name = 'DataDirInUseError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireDataDirLock(dataDir: string): { release(): void } {
  const file = path.join(dataDir, 'palaver.lock');
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
        throw new DataDirInUseError(dataDir, owner);
      }
      rmSync(file, { force: true });
    }
  }
  return {
    release: () => rmSync(file, { force: true }),
  };
}
