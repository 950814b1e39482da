// Builds the browser bundles Palaver serves (the chat widget, the operator dashboard) into
// dist/web/. Runs at `npm install` (the `prepare` script) and before the browser tests, so
// `npm install && npm start` stays the whole setup and a test never runs a stale bundle.
import { build, context, type BuildOptions } from 'esbuild';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const webOutDir = path.join(root, 'dist', 'web');

/** ES2020: every browser of the last five years (Safari 14, Chrome/Edge/Firefox 80+). */
const target = ['es2020'];

const bundles: BuildOptions[] = [
  {
    // One classic script a site embeds with one tag: no module loader, no globals but window.Palaver.
    entryPoints: [path.join(root, 'web/widget/src/main.ts')],
    outfile: path.join(webOutDir, 'widget.js'),
    format: 'iife',
  },
  {
    // The operator dashboard (web/dashboard/, served under /dashboard): one script, one style sheet.
    entryPoints: [
      { in: path.join(root, 'web/dashboard/src/main.ts'), out: 'app' },
      { in: path.join(root, 'web/dashboard/src/styles.css'), out: 'app' },
    ],
    outdir: path.join(webOutDir, 'dashboard'),
    format: 'iife',
    // Operators use current browsers; esbuild cannot lower destructuring to Safari 14.
    target: ['chrome100', 'firefox100', 'safari15', 'edge100'],
  },
];

const common: BuildOptions = { bundle: true, minify: true, sourcemap: false, target, legalComments: 'none', logLevel: 'warning' };

export async function buildWeb(): Promise<void> {
  mkdirSync(webOutDir, { recursive: true });
  await Promise.all(bundles.map((options) => build({ ...common, ...options })));
}

/** `npm run dev`: rebuilds each bundle when its sources change (the server re-reads it at the next request). */
export async function watchWeb(): Promise<() => Promise<void>> {
  mkdirSync(webOutDir, { recursive: true });
  const contexts = await Promise.all(bundles.map((options) => context({ ...common, ...options, logLevel: 'info' })));
  await Promise.all(contexts.map((c) => c.watch()));
  return async () => {
    await Promise.all(contexts.map((c) => c.dispose()));
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildWeb();
}
