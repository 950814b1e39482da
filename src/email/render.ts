// The email of a burst of answers, in the customer's language (English unless Dutch is known):
// a text part and an HTML part with the same content. No remote images and no scripts: pictures
// and files are links (signed, expiring), so opening the email tells nobody anything.
import type { Burst, BurstMessage } from './compose.ts';
import { addressDigest, signLink } from './links.ts';

export interface LinkOptions {
  publicUrl: string;
  linkSecret: string;
  linkTtlSeconds: number;
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
  unsubscribeUrl: string;
  conversationUrl: string | null;
}

const STRINGS = {
  en: {
    subject: (n: number, account: string) => (n === 1 ? `New answer from ${account}` : `${n} new answers from ${account}`),
    hello: (name: string | null) => (name ? `Hello ${name},` : 'Hello,'),
    intro: (account: string) => `You have an answer from ${account} to your question in the chat:`,
    wrote: (agent: string) => `${agent} wrote:`,
    picture: 'Picture',
    file: 'File',
    linksUntil: (date: string) => `Links to pictures and files work until ${date}.`,
    continue: 'Continue the conversation',
    unsubscribe: 'Do not want these emails any more? Unsubscribe',
    team: 'the team',
  },
  nl: {
    subject: (n: number, account: string) => (n === 1 ? `Nieuw antwoord van ${account}` : `${n} nieuwe antwoorden van ${account}`),
    hello: (name: string | null) => (name ? `Hallo ${name},` : 'Hallo,'),
    intro: (account: string) => `Je hebt antwoord van ${account} op je vraag in de chat:`,
    wrote: (agent: string) => `${agent} schreef:`,
    picture: 'Afbeelding',
    file: 'Bestand',
    linksUntil: (date: string) => `Links naar afbeeldingen en bestanden werken tot ${date}.`,
    continue: 'Ga verder met het gesprek',
    unsubscribe: 'Geen e-mails meer ontvangen? Afmelden',
    team: 'het team',
  },
} as const;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

function base(publicUrl: string): string {
  return publicUrl.replace(/\/+$/, '');
}

/** The link back: the page the customer chatted on, with the conversation in its fragment (never sent to the page's server). */
export function conversationLink(pageUrl: string, token: string): string {
  const url = new URL(pageUrl);
  url.hash = `palaver-conversation=${token}`;
  return url.toString();
}

export interface Part {
  kind: 'text' | 'link';
  text: string;
  url?: string;
}

/** A message as paragraphs and links (pictures and files as signed links, web buttons as links). */
export function partsOf(message: BurstMessage, links: (path: string) => string, t: { picture: string; file: string }): Part[] {
  const parts: Part[] = [];
  if (message.content?.title) parts.push({ kind: 'text', text: message.content.title });
  if (message.message) parts.push({ kind: 'text', text: message.message });
  const media = [message.media, ...(message.content?.carousel ?? []).map((item) => item.media)];
  for (const item of message.content?.carousel ?? []) {
    if (item.title) parts.push({ kind: 'text', text: item.title });
    if (item.message) parts.push({ kind: 'text', text: item.message });
  }
  for (const m of media) {
    if (!m) continue;
    const label = m.mimeType.startsWith('image/') ? t.picture : t.file;
    parts.push({ kind: 'link', text: m.description ? `${label}: ${m.description}` : label, url: links(m.path) });
  }
  for (const button of [...(message.content?.buttons ?? []), ...(message.content?.carousel ?? []).flatMap((i) => i.buttons)]) {
    if (button.type === 'webUrl' && /^https?:\/\//i.test(button.payload))
      parts.push({ kind: 'link', text: button.title, url: button.payload });
  }
  return parts;
}

export function renderEmail(burst: Burst, options: LinkOptions, now = Date.now()): RenderedEmail {
  const t = burst.language === 'nl' ? STRINGS.nl : STRINGS.en;
  const root = base(options.publicUrl);
  const exp = Math.floor(now / 1000) + options.linkTtlSeconds;
  const mediaLink = (path: string) =>
    `${root}/email/media/${signLink(options.linkSecret, { k: 'media', a: burst.accountId, u: burst.userId, p: path, exp })}`;
  const unsubscribeUrl = `${root}/email/unsubscribe/${signLink(options.linkSecret, { k: 'unsubscribe', a: burst.accountId, u: burst.userId })}`;
  // From the newest answer, not from the attempt: a retried email says exactly what the first said.
  const newest = Math.max(...burst.messages.map((m) => m.createdAt.getTime()), 0);
  const conversationExp = Math.floor(newest / 1000) + options.linkTtlSeconds;
  const conversationUrl = burst.pageUrl
    ? conversationLink(
        burst.pageUrl,
        signLink(options.linkSecret, {
          k: 'conversation',
          a: burst.accountId,
          u: burst.userId,
          e: addressDigest(burst.email),
          exp: conversationExp,
        }),
      )
    : null;
  const blocks = burst.messages.map((message) => ({ agent: message.agent?.name ?? t.team, parts: partsOf(message, mediaLink, t) }));
  const hasLinks = burst.messages.some((m) => m.media || m.content?.carousel.some((i) => i.media));
  const until = new Date(exp * 1000).toISOString().slice(0, 10);

  const text = [
    t.hello(burst.name),
    '',
    t.intro(burst.accountName),
    '',
    ...blocks.flatMap((block) => [
      t.wrote(block.agent),
      ...block.parts.map((p) => (p.kind === 'link' ? `${p.text}: ${p.url ?? ''}` : p.text)),
      '',
    ]),
    ...(hasLinks ? [t.linksUntil(until), ''] : []),
    ...(conversationUrl ? [`${t.continue}: ${conversationUrl}`, ''] : []),
    '-- ',
    `${t.unsubscribe}: ${unsubscribeUrl}`,
    '',
  ].join('\n');

  const paragraph = (p: Part) =>
    p.kind === 'link'
      ? `<p><a href="${escapeHtml(p.url ?? '')}">${escapeHtml(p.text)}</a></p>`
      : `<p>${escapeHtml(p.text).replace(/\n/g, '<br>')}</p>`;
  const lang = burst.language === 'nl' ? 'nl' : 'en';
  const html = [
    `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>${escapeHtml(t.subject(blocks.length, burst.accountName))}</title></head>`,
    '<body style="font-family: sans-serif; line-height: 1.5">',
    `<p>${escapeHtml(t.hello(burst.name))}</p>`,
    `<p>${escapeHtml(t.intro(burst.accountName))}</p>`,
    ...blocks.map(
      (block) =>
        `<blockquote style="margin: 1em 0; padding-left: 1em; border-left: 3px solid #ccc"><p><strong>${escapeHtml(t.wrote(block.agent))}</strong></p>${block.parts.map(paragraph).join('')}</blockquote>`,
    ),
    ...(hasLinks ? [`<p><small>${escapeHtml(t.linksUntil(until))}</small></p>`] : []),
    ...(conversationUrl ? [`<p><a href="${escapeHtml(conversationUrl)}">${escapeHtml(t.continue)}</a></p>`] : []),
    `<hr><p><small><a href="${escapeHtml(unsubscribeUrl)}">${escapeHtml(t.unsubscribe)}</a></small></p>`,
    '</body></html>',
  ].join('\n');

  return { subject: t.subject(blocks.length, burst.accountName), text, html, unsubscribeUrl, conversationUrl };
}
