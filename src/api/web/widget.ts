// The chat widget's script, as sites embed it (docs/widget.md): /widget.js always the newest
// build (cached briefly, revalidated by ETag), /widget/<hash>.js one exact build (cached for
// good), and /widget.json naming the newest with its integrity value. Served to any origin
// (CORS *) so that a tag with `integrity` and `crossorigin` can check it.
import type { Context } from 'koa';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { respond } from '../../http/respond.ts';
import type { AppRouter } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';
import type { WebAsset, WebAssets } from '../../http/web-assets.ts';

export const WIDGET_FILE = 'widget.js';

export const widgetBuildParams = z.object({
  hash: z.string().regex(/^[0-9a-f]{12}\.js$/, 'the 12-digit hash of a build, then .js'),
});

function builtWidget(assets: WebAssets): WebAsset {
  const asset = assets.get(WIDGET_FILE);
  // Built by `npm install` (the prepare script); a checkout without it says so instead of 404.
  if (!asset) throw new AppError(503, 'widget_not_built');
  return asset;
}

function sendScript(ctx: Context, asset: WebAsset, cacheControl: string): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.etag = asset.etag;
  ctx.type = 'text/javascript; charset=utf-8';
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.body = asset.body;
}

export function widgetRoutes(router: AppRouter, assets: WebAssets): void {
  router.get('/widget.js', (ctx) => {
    // Five minutes, then a revalidation that costs a 304: sites get a fix within minutes.
    sendScript(ctx, builtWidget(assets), 'public, max-age=300, stale-while-revalidate=86400');
  });

  router.get('/widget/:hash', (ctx) => {
    const { hash } = parseParams(ctx, widgetBuildParams);
    const asset = builtWidget(assets);
    // Only the build this node has: an older hash is gone, not silently swapped for the new one.
    if (`${asset.hash}.js` !== hash) throw new AppError(404, 'widget_build_not_found');
    sendScript(ctx, asset, 'public, max-age=31536000, immutable');
  });

  router.get('/widget.json', (ctx) => {
    const asset = builtWidget(assets);
    ctx.set('Access-Control-Allow-Origin', '*');
    respond(ctx, {
      data: { path: `/widget/${asset.hash}.js`, integrity: asset.integrity, bytes: asset.body.length },
    });
  });
}
