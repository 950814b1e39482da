// Where a test run keeps its data: a fresh temporary directory for the embedded database,
// or, with TEST_DATABASE_URL, a fresh database on that PostgreSQL server, dropped at the end.
//
// A fresh database starts as a copy of one template migrated once per test process: creating an
// embedded database from nothing (PGlite's initdb) costs about 5 CPU seconds, copying a migrated
// one a tenth of that; on PostgreSQL `create database … template …` skips running the migrations
// again. Tests of what a first start does on nothing ask for an empty database.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createLogger } from '../../src/logger.ts';
import { migrate, openDatabase } from '../../src/db/orm.ts';

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

function urlOf(name: string): string {
  const url = new URL(serverUrl ?? '');
  url.pathname = `/${name}`;
  return url.toString();
}

let counter = 0;
const uniqueName = (label: string) => `palaver_${label}_${process.pid}_${Date.now().toString(36)}_${counter++}`.toLowerCase();

interface Template {
  /** Embedded: the migrated PGlite directory to copy. PostgreSQL: the template database's name. */
  source: string;
  remove(): Promise<void>;
}

let template: Promise<Template> | undefined;

/** Migrates the template the first time a test asks for a database, with the code as it is now. */
function migratedTemplate(): Promise<Template> {
  template ??= (async () => {
    const logger = createLogger({ logLevel: 'silent' });
    const dataDir = tempDir('template');
    const name = serverUrl ? uniqueName('template') : '';
    if (serverUrl) await adminQuery(`create database "${name}"`);
    const db = await openDatabase({ databaseUrl: serverUrl ? urlOf(name) : undefined, dataDir }, logger);
    try {
      await migrate(db, logger);
    } finally {
      // Closed before any copy: PGlite checkpoints on a clean close, and PostgreSQL copies only a
      // template nobody is connected to.
      await db.close();
    }
    if (serverUrl) {
      rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
      return { source: name, remove: () => adminQuery(`drop database if exists "${name}" with (force)`) };
    }
    return {
      source: path.join(dataDir, 'pglite'),
      remove: () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 })),
    };
  })();
  return template;
}

/** Removes this process's template (the root hook's afterAll). */
export async function dropTemplate(): Promise<void> {
  const made = template;
  template = undefined;
  if (made) await (await made).remove();
}

/**
 * A database of its own for a test. `empty`: nothing in it, for tests of migrations and of a first
 * start; otherwise migrated, as a started server leaves it before bootstrap (no operators).
 */
export async function createTestDatabase(label = 'test', options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const from = options.empty ? undefined : await migratedTemplate();
  const dataDir = tempDir(label);
  if (!serverUrl) {
    if (from) cpSync(from.source, path.join(dataDir, 'pglite'), { recursive: true });
    const drop = () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 }));
    return { databaseUrl: undefined, dataDir, drop };
  }
  const name = uniqueName(label);
  await adminQuery(from ? `create database "${name}" template "${from.source}"` : `create database "${name}"`);
  return {
    databaseUrl: urlOf(name),
    dataDir,
    async drop() {
      await adminQuery(`drop database if exists "${name}" with (force)`);
      rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}
