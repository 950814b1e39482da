// A customer's site that embeds Palaver's widget with the one script tag of docs/widget.md,
// served by a real HTTP server on loopback at http://localhost:<port> while Palaver is at
// http://127.0.0.1:<port>: another origin, so the widget meets CORS, and (when asked) the
// strict Content-Security-Policy that docs/widget.md gives sites.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { startLoopbackSite, type LoopbackSite } from './loopback-site.ts';

export interface WidgetHostOptions {
  account: string;
  /** `window.palaverSettings`, set by a script of the site's own before the tag. */
  settings?: Record<string, unknown>;
  /** Extra `data-*` attributes on the tag, without the prefix. */
  data?: Record<string, string>;
  /** Serve the page with the strict policy of docs/widget.md. */
  strictCsp?: boolean;
  /** Serve the page with this Content-Security-Policy (wins over `strictCsp`). */
  policy?: string;
}

export type WidgetHost = LoopbackSite;

const attr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The policy docs/widget.md asks of a site: Palaver's origin for scripts and connections, blob: images. */
export function strictPolicy(palaverUrl: string): string {
  const palaver = new URL(palaverUrl);
  return [
    "default-src 'self'",
    `script-src 'self' ${palaver.origin}`,
    `connect-src 'self' ${palaver.origin} ws://${palaver.host} wss://${palaver.host}`,
    `img-src 'self' blob: ${palaver.origin}`,
    "style-src 'self'",
    "base-uri 'none'",
  ].join('; ');
}

const WIDGET_DOC = path.resolve(import.meta.dirname, '..', '..', 'docs', 'widget.md');

/**
 * The policy exactly as docs/widget.md prints it for sites (the fenced block of its
 * Content-Security-Policy section), with its example Palaver `chat.example.com` replaced by the
 * one under test: https becomes the test server's http origin, wss its ws.
 */
export function documentedPolicy(palaverUrl: string): string {
  const doc = readFileSync(WIDGET_DOC, 'utf8');
  const block = /### Content-Security-Policy\n[\s\S]*?```\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/widget.md has no policy block under "### Content-Security-Policy"');
  const palaver = new URL(palaverUrl);
  return block
    .trim()
    .split('\n')
    .map((line) => line.trim())
    .join(' ')
    .replaceAll('https://chat.example.com', palaver.origin)
    .replaceAll('wss://chat.example.com', `ws://${palaver.host}`);
}

export async function startWidgetHost(palaverUrl: string, options: WidgetHostOptions): Promise<WidgetHost> {
  const data = Object.entries({ account: options.account, ...options.data })
    .map(([name, value]) => ` data-${name}="${attr(value)}"`)
    .join('');
  const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Acme Outdoor: tents and more</title>
  <link rel="stylesheet" href="/site.css">
</head>
<body>
  <header><h1>Acme Outdoor</h1></header>
  <main>
    <p>Tents, sleeping bags and everything for a night outside. Questions? Chat with us.</p>
    <button type="button" id="site-button">A button of the site</button>
  </main>
  ${options.settings ? '<script src="/settings.js"></script>' : ''}
  <script src="${palaverUrl}/widget.js"${data} async></script>
</body>
</html>`;
  // The site's own CSS is deliberately hostile: the widget must look the same whatever it says.
  const css =
    'body { font: 18px/1.6 Georgia, serif; margin: 2rem; color: #222; background: #faf7f0; } button { all: unset; color: red; } * { box-sizing: content-box; }';
  const settings = `window.palaverSettings = ${JSON.stringify(options.settings ?? {})};`;
  return startLoopbackSite((req, res) => {
    const headers: Record<string, string> = { 'cache-control': 'no-store' };
    if (options.policy) headers['content-security-policy'] = options.policy;
    else if (options.strictCsp) headers['content-security-policy'] = strictPolicy(palaverUrl);
    if (req.url === '/') return res.writeHead(200, { ...headers, 'content-type': 'text/html; charset=utf-8' }).end(page);
    if (req.url === '/site.css') return res.writeHead(200, { ...headers, 'content-type': 'text/css' }).end(css);
    if (req.url === '/settings.js') return res.writeHead(200, { ...headers, 'content-type': 'text/javascript' }).end(settings);
    res.writeHead(req.url === '/favicon.ico' ? 204 : 404).end();
  });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** No serious or critical axe-core violation in the widget as the page shows it now (the host page's own markup aside). */
export async function expectWidgetAccessible(page: Page): Promise<void> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const violations = await page.evaluate<Array<{ id: string; impact: string }>>(`axe
    .run({ include: [['[data-palaver-widget]']] }, { resultTypes: ['violations'] })
    .then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ') + ' ' + (n.failureSummary || '')) })))`);
  expect(
    violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
    JSON.stringify(violations),
  ).to.deep.equal([]);
}
