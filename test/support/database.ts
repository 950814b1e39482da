// Where a test run keeps its data: a fresh temporary directory for the embedded database,
// or, with TEST_DATABASE_URL, a fresh database on that PostgreSQL server, dropped at the end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface TestDatabase {
  /** Set in PostgreSQL mode. */
  databaseUrl: string | undefined;
  /** Always set: the embedded database lives here in embedded mode; media too, later. */
  dataDir: string;
  drop(): Promise<void>;
}

export const serverUrl = process.env.TEST_DATABASE_URL || undefined;
export const mode = serverUrl ? 'postgresql' : 'embedded';

export function tempDir(label: string): string {
  return mkdtempSync(path.join(tmpdir(), `palaver-${label}-`));
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(label = 'test'): Promise<TestDatabase> {
  const dataDir = tempDir(label);
  if (!serverUrl) {
    const drop = () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true }));
    return { databaseUrl: undefined, dataDir, drop };
  }
  const name = `palaver_${label}_${process.pid}_${Date.now().toString(36)}`.toLowerCase();
  await adminQuery(`create database "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    databaseUrl: url.toString(),
    dataDir,
    async drop() {
      await adminQuery(`drop database if exists "${name}" with (force)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
