// The programs the tests start as processes (the server, src/main.ts; the admin command line,
// scripts/admin.ts), bundled by esbuild once per run (hooks.ts, mochaGlobalSetup) into the run's
// directory, dependencies included. Under tsx a process spends about 3.5 CPU seconds before it
// listens, most of them resolving and compiling some thousands of modules (tsx's loader hooks,
// then Node's own); from the bundle about 1. The suite starts some sixty processes.
//
// The bundle is the same code, compiled by the same esbuild tsx uses, with these differences, each
// kept so that a program does what it does from its sources:
// - `__dirname`, `__filename` and `import.meta` `dirname`, `filename` and `url` are, in each
//   module, its source's: config/*.json, dist/web and a package's own files are found where they
//   are, and a package resolves others from where it is. Except the URL of src/db/embedded.ts,
//   which starts the bundled embedded-worker.mjs beside it: compiled JavaScript, as from a build.
// - What loads files beside its module stays outside, loaded from node_modules as usual: PGlite
//   (WebAssembly and data files) and its socket server. So do the drivers of other databases that
//   knex and MikroORM name but that are not installed (never loaded here).
// - `npm start` itself (npm, tsx, src/main.ts) is still run by test/process.test.ts.
import { readFile } from 'node:fs/promises';
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

const BUNDLE_ENV = 'PALAVER_TEST_BUNDLE';

/** The programs a test may start, by their path in the repository, and their name in the bundle. */
const ENTRIES = {
  'src/main.ts': 'main',
  'scripts/admin.ts': 'admin',
  // Its own entry: src/db/embedded.ts starts it in a worker thread, beside the module that starts it.
  'src/db/embedded-worker.ts': 'embedded-worker',
} as const;

/** The one module that finds a module by its own URL: the worker, an entry of the bundle. */
const WORKER_STARTER = path.join(ROOT, 'src', 'db', 'embedded.ts');

export type Program = 'src/main.ts' | 'scripts/admin.ts';

const EXTERNAL = [
  '@electric-sql/pglite',
  'better-sqlite3',
  'libsql',
  'mariadb',
  'mysql',
  'mysql2',
  'oracledb',
  'pg-native',
  'pg-query-stream',
  'sqlite3',
  'tedious',
];

/** In each module, its source's location (directory, file name, URL), as the unbundled module sees it. */
const sourceLocations: Plugin = {
  name: 'source-locations',
  setup(bundler) {
    bundler.onLoad({ filter: /\.(ts|js|cjs|mjs)$/ }, async ({ path: file }) => {
      const text = await readFile(file, 'utf8');
      const dirname = JSON.stringify(path.dirname(file));
      const filename = JSON.stringify(file);
      let contents = text.replaceAll('import.meta.dirname', dirname).replaceAll('import.meta.filename', filename);
      if (file !== WORKER_STARTER) contents = contents.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(file).href));
      if (/\b__(dirname|filename)\b/.test(contents)) {
        // After a shebang, which must stay first. (A "use strict" after it stops being a directive,
        // which changes nothing: the bundle is an ES module, all strict.)
        const shebang = /^#!.*\n/.exec(contents)?.[0] ?? '';
        contents = `${shebang}var __dirname = ${dirname}, __filename = ${filename};\n${contents.slice(shebang.length)}`;
      }
      if (contents === text) return undefined;
      return { contents, loader: file.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
};

/** Builds the bundle into `dir` (a directory of the run) for the processes of this run, workers included. */
export async function buildProcessBundle(dir: string): Promise<void> {
  await build({
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([source, name]) => [name, path.join(ROOT, source)])),
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node}`,
    // Names as written (esbuild renames what collides across modules): error and class names read the same.
    keepNames: true,
    external: EXTERNAL,
    // The CommonJS modules' require() of Node's own modules, in an ES module.
    // (Under a name no module declares: the banner is outside what esbuild renames.)
    banner: {
      js: "import { createRequire as createBundleRequire } from 'node:module'; const require = createBundleRequire(import.meta.url);",
    },
    plugins: [sourceLocations],
    logLevel: 'warning',
  });
  // The external packages, found from the bundle as from the repository.
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  process.env[BUNDLE_ENV] = dir;
}

/** The bundled file that runs `program`. */
export function bundled(program: Program): string {
  const dir = process.env[BUNDLE_ENV];
  if (!dir) throw new Error('no process bundle (test/support/hooks.ts, mochaGlobalSetup, is not loaded)');
  return path.join(dir, `${ENTRIES[program]}.mjs`);
}
