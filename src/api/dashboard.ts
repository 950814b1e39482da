// The operator dashboard (web/dashboard/, docs/dashboard.md): an HTML shell and the bundles
// scripts/build-web.ts wrote to dist/web/dashboard. The page holds no data of its own: it signs
// in and reads everything through the Admin API and the /operators socket namespace. A strict
// CSP: the page runs only its own script and style, talks only to this origin, and cannot be
// framed (no clickjacking of an operator's session).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Router from '@koa/router';
import { AppError } from '../errors.ts';
import type { AppContext, AppContextExtras, AppRouter, AppState } from '../http/types.ts';

/** Where scripts/build-web.ts writes the dashboard (dist/web/dashboard). */
const BUILT = path.resolve(import.meta.dirname, '..', '..', 'dist', 'web', 'dashboard');

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // The only images are conversation files, fetched with the operator's token and shown from
  // object URLs (web/dashboard/src/media.ts).
  'img-src blob:',
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Palaver dashboard</title>
<link rel="stylesheet" href="/dashboard/app.css">
<script src="/dashboard/app.js" defer></script>
</head>
<body>
<noscript>The Palaver dashboard needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`;

const ASSETS = { 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8' } as const;

function secure(ctx: AppContext): void {
  ctx.set('content-security-policy', CSP);
  ctx.set('x-content-type-options', 'nosniff');
  ctx.set('referrer-policy', 'no-referrer');
  ctx.set('x-frame-options', 'DENY');
}

export function dashboardRouter(): AppRouter {
  const router: AppRouter = new Router<AppState, AppContextExtras>();
  // Read on first use and kept: the bundles change only with a build, that is, a restart.
  const cache = new Map<string, Buffer>();

  router.get('/dashboard', (ctx) => {
    secure(ctx);
    ctx.set('cache-control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = SHELL;
  });

  router.get('/dashboard/:asset', async (ctx) => {
    const asset = ctx.params.asset as keyof typeof ASSETS;
    if (!Object.hasOwn(ASSETS, asset)) throw new AppError(404, 'not_found');
    let bytes = cache.get(asset);
    if (!bytes) {
      try {
        bytes = await readFile(path.join(BUILT, asset));
      } catch {
        // Installed without the prepare script (npm install --ignore-scripts): say how to build.
        throw new AppError(503, 'dashboard_not_built', [], { hint: 'npm run build:web' });
      }
      cache.set(asset, bytes);
    }
    secure(ctx);
    ctx.set('cache-control', 'no-cache');
    ctx.type = ASSETS[asset];
    ctx.body = bytes;
  });
  return router;
}
