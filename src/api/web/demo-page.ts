// GET /: with `demoPage.enabled` (the default outside production), a small page that embeds the
// chat widget on one account, so that the first `npm start` shows a working chat at once. The
// page holds itself to the Content-Security-Policy docs/widget.md asks of sites.
import { findAccountOrFirst } from '../../tenancy/accounts.ts';
import { randomBytes } from 'node:crypto';
import { type Account } from '../../db/entities/index.ts';
import { notFound } from '../../errors.ts';
import type { AppContext, AppRouter } from '../../http/types.ts';

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

async function demoAccount(ctx: AppContext): Promise<Account | null> {
  const { account } = ctx.deps.config.demoPage;
  return findAccountOrFirst(ctx.deps.db.orm.em, account);
}

function page(account: Account | null, nonce: string, origin: string): string {
  const body = account
    ? `<p>This page embeds the Palaver chat widget on the account <strong>${escapeHtml(account.name)}</strong>
       (identification <code>${escapeHtml(account.identification)}</code>). Open the chat with the button at the bottom right
       and say hello.</p>
    <h2>Answer as a Service</h2>
    <p>Messages go to the account's default Service by signed webhook. With the demo setup of a first start, run
       <code>npm run demo-bot</code> in another shell: the demo Service's webhook points at it, and it answers every
       message. Or answer yourself through the Service API:</p>
    <pre>curl -X POST ${escapeHtml(origin)}/serviceApi/v2.3/users/&lt;userId&gt;/messages \\
  -H "authorization: Bearer &lt;API key&gt;" -H 'content-type: application/json' \\
  -d '{"message": "Hello from an agent", "agent": {"id": 1, "name": "Ada"}}'</pre>
    <p>The user id is in every webhook payload. The operator dashboard is at <a href="/dashboard">/dashboard</a>.</p>
    <script src="/widget.js" data-account="${escapeHtml(account.identification)}" data-title="Chat with ${escapeHtml(account.name)}" async></script>`
    : `<p>There is no account yet, so there is no chat to show. Create one with
       <code>npm run admin -- account:create --name "My shop"</code> and reload.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" href="data:,">
  <title>Palaver: chat widget demo</title>
  <style nonce="${nonce}">
    body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 3rem auto; padding: 0 1.25rem; color: #1f2933; }
    h1 { font-size: 1.75rem; margin-bottom: .25rem; }
    code, pre { font: 14px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; background: #f1f3f5; border-radius: 4px; }
    code { padding: .1em .3em; }
    pre { padding: .75rem 1rem; overflow-x: auto; }
    .lead { color: #52606d; margin-top: 0; }
  </style>
</head>
<body>
  <main>
    <h1>Palaver</h1>
    <p class="lead">A self-hosted customer chat. This is its demo page.</p>
    ${body}
  </main>
</body>
</html>
`;
}

export function demoPageRoutes(router: AppRouter): void {
  router.get('/', async (ctx) => {
    if (!ctx.deps.config.demoPage.enabled) throw notFound('route_not_found');
    const nonce = randomBytes(16).toString('base64');
    ctx.set(
      'Content-Security-Policy',
      [
        "default-src 'self'",
        "script-src 'self'",
        "connect-src 'self'",
        "img-src 'self' blob: data: https:",
        `style-src 'self' 'nonce-${nonce}'`,
        "base-uri 'none'",
        "frame-ancestors 'none'",
      ].join('; '),
    );
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page(await demoAccount(ctx), nonce, `${ctx.protocol}://${ctx.host}`);
  });
}
