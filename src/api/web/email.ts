// The links of answers by email (docs/security.md): a file of the conversation, and the
// unsubscribe link. Both work without a login: the signed token is the permission, for the one
// file (until it expires) or the one customer of the one account. GET on the unsubscribe link
// only shows a button (mail scanners open links); POST, the button or a mail client's one-click
// unsubscribe (RFC 8058), records it.
import { z } from 'zod';
import { unsubscribeEmail } from '../../conversations/contact.ts';
import { readMedia } from '../../conversations/media.ts';
import { verifyLink } from '../../email/links.ts';
import { notFound } from '../../errors.ts';
import { sendMedia } from '../../http/media-response.ts';
import type { AppContext, AppRouter } from '../../http/types.ts';
import { parseParams } from '../../http/validate.ts';

export const emailLinkParams = z.object({ token: z.string().min(1).max(2000) });

function secret(ctx: AppContext): string {
  const { linkSecret } = ctx.deps.config.email;
  // Without a secret no link was ever made: every token is refused.
  if (!linkSecret) throw notFound('link_not_found');
  return linkSecret;
}

function page(ctx: AppContext, status: number, title: string, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('cache-control', 'no-store');
  ctx.set('content-security-policy', "default-src 'none'; form-action 'self'; style-src 'unsafe-inline'");
  ctx.set('referrer-policy', 'no-referrer');
  ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title></head>
<body style="font-family: sans-serif; max-width: 36em; margin: 3em auto; padding: 0 1em">
${body}
</body></html>`;
}

export function emailLinkRoutes(router: AppRouter): void {
  router.get('/email/media/:token', async (ctx) => {
    const { token } = parseParams(ctx, emailLinkParams);
    const claims = verifyLink(secret(ctx), token, 'media');
    if (!claims) throw notFound('link_not_found');
    // Still the conversation's (an erased user's files are gone with them).
    const found = await readMedia(ctx.deps.db.orm.em, ctx.deps.media, { accountId: claims.a, userId: claims.u }, claims.p);
    if (!found) throw notFound('media_not_found');
    sendMedia(ctx, found);
    ctx.set('referrer-policy', 'no-referrer');
  });

  router.get('/email/unsubscribe/:token', (ctx) => {
    const { token } = parseParams(ctx, emailLinkParams);
    if (!verifyLink(secret(ctx), token, 'unsubscribe')) throw notFound('link_not_found');
    page(
      ctx,
      200,
      'Unsubscribe / Afmelden',
      `<form method="post">
<p>Stop receiving answers from this chat by email? / Geen antwoorden uit deze chat meer per e-mail ontvangen?</p>
<p><button type="submit">Unsubscribe / Afmelden</button></p>
</form>`,
    );
  });

  router.post('/email/unsubscribe/:token', async (ctx) => {
    const { token } = parseParams(ctx, emailLinkParams);
    const claims = verifyLink(secret(ctx), token, 'unsubscribe');
    if (!claims) throw notFound('link_not_found');
    // An erased customer is as unsubscribed as can be: the same answer.
    await unsubscribeEmail(ctx.deps.db.orm.em, { accountId: claims.a, userId: claims.u });
    page(
      ctx,
      200,
      'Unsubscribed / Afgemeld',
      '<p>You will not receive answers from this chat by email any more. / Je ontvangt geen antwoorden uit deze chat meer per e-mail.</p>',
    );
  });
}
