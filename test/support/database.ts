// Where a test run keeps its data: a fresh temporary directory for the embedded database,
// or, with TEST_DATABASE_URL, a fresh database on that PostgreSQL server.
//
// A fresh database starts as a copy of one template migrated once per run, before any test file
// loads (hooks.ts, mochaGlobalSetup): creating an embedded database from nothing (PGlite's initdb)
// costs about 5 CPU seconds, copying a migrated one a tenth of that; on PostgreSQL
// `create database … template …` skips running the migrations again. Tests of what a first start
// does on nothing ask for an empty database.
//
// Everything a run makes carries the run's name, handed to mocha's parallel workers in the
// environment: directories live under one run directory, PostgreSQL databases are named
// palaver_<run>_…, so that workers never collide (names also carry the process id) and the end of
// the run (removeRun) removes what a worker left behind, its shared server's database included.
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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

const RUN_ENV = 'PALAVER_TEST_RUN';
const TEMPLATE_ENV = 'PALAVER_TEST_TEMPLATE';

interface Run {
  /** Lower-case letters and digits: part of every database name. */
  name: string;
  /** Every directory of the run is made under this one. */
  dir: string;
}

function currentRun(): Run {
  const name = process.env[RUN_ENV];
  if (!name) throw new Error('no test run is set up (test/support/hooks.ts, mochaGlobalSetup, is not loaded)');
  return { name, dir: path.join(tmpdir(), `palaver-run-${name}`) };
}

export function tempDir(label: string): string {
  return mkdtempSync(path.join(currentRun().dir, `${label}-`));
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
const uniqueName = (label: string) => `palaver_${currentRun().name}_${label}_${process.pid}_${counter++}`.toLowerCase();

/** Starts a run (the global setup, once, before mocha starts its workers): its name and directory. */
export function startRun(): void {
  process.env[RUN_ENV] = `${process.pid}${Date.now().toString(36)}`;
  mkdirSync(currentRun().dir, { recursive: true });
}

/**
 * The run's template (the global setup, after startRun), migrated with the code as it is now.
 * Embedded: a migrated PGlite directory to copy; PostgreSQL: a database to copy.
 */
export async function makeTemplate(): Promise<void> {
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
  process.env[TEMPLATE_ENV] = serverUrl ? name : path.join(dataDir, 'pglite');
}

/** Ends the run (the global teardown): every database and directory it made, whoever made it. */
export async function removeRun(): Promise<void> {
  const run = currentRun();
  if (serverUrl) {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      const made = await client.query<{ datname: string }>('select datname from pg_database where datname like $1', [
        `palaver\\_${run.name}\\_%`,
      ]);
      for (const { datname } of made.rows) await client.query(`drop database if exists "${datname}" with (force)`);
    } finally {
      await client.end();
    }
  }
  rmSync(run.dir, { recursive: true, force: true, maxRetries: 5 });
  delete process.env[RUN_ENV];
  delete process.env[TEMPLATE_ENV];
}

function template(): string {
  const source = process.env[TEMPLATE_ENV];
  if (!source) throw new Error('no template database (test/support/hooks.ts, mochaGlobalSetup, is not loaded)');
  return source;
}

/**
 * A database of its own for a test. `empty`: nothing in it, for tests of migrations and of a first
 * start; otherwise migrated, as a started server leaves it before bootstrap (no operators).
 */
export async function createTestDatabase(label = 'test', options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const from = options.empty ? undefined : template();
  const dataDir = tempDir(label);
  if (!serverUrl) {
    if (from) cpSync(from, path.join(dataDir, 'pglite'), { recursive: true });
    const drop = () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 }));
    return { databaseUrl: undefined, dataDir, drop };
  }
  const name = uniqueName(label);
  await adminQuery(from ? `create database "${name}" template "${from}"` : `create database "${name}"`);
  return {
    databaseUrl: urlOf(name),
    dataDir,
    async drop() {
      await adminQuery(`drop database if exists "${name}" with (force)`);
      rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}
