// The transcript a customer asks for (Client API POST /users/me/transcript): their whole
// conversation, every message they can see in the chat up to the newest when they asked, read
// when the email is sent, to the address on their user, in their language. Pictures and files
// are signed, expiring links, as in the answers' emails (render.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { MessageType } from '../db/entities/index.ts';
import { prepared } from '../db/prepared.ts';
import { isReachable, RECIPIENT_COLUMNS, unreachable, type Addressee, type BurstMessage, type Recipient } from './compose.ts';
import { signLink } from './links.ts';
import { escapeHtml, partsOf, type LinkOptions, type Part } from './render.ts';

export interface TranscriptPayload {
  userId: number;
  transcriptThrough: number;
}

export function isTranscript(payload: object): payload is TranscriptPayload {
  return 'transcriptThrough' in payload;
}

interface TranscriptMessage extends BurstMessage {
  typeId: number;
}

export interface Transcript extends Addressee {
  messages: TranscriptMessage[];
}

/** The transcript as it is now, or why none goes (the address gone, unsubscribed since). */
export async function composeTranscript(
  em: EntityManager,
  payload: TranscriptPayload,
): Promise<{ kind: 'send'; transcript: Transcript } | { kind: 'skip'; reason: string }> {
  const [user] = await prepared<Recipient>(
    em,
    `select ${RECIPIENT_COLUMNS}
       from users u join accounts a on a.id = u.account_id where u.id = ?`,
    [payload.userId],
  );
  if (!isReachable(user)) return unreachable(user);
  const messages = await prepared<TranscriptMessage>(
    em,
    `select id, type_id as "typeId", message, media, content, agent, created_at as "createdAt" from messages
      where user_id = ? and type_id <> ? and id <= ? order by id`,
    [payload.userId, MessageType.userSystem, payload.transcriptThrough],
  );
  return {
    kind: 'send',
    transcript: {
      ...user,
      email: user.email,
      userId: payload.userId,
      messages: messages.map((m) => ({ ...m, id: Number(m.id), createdAt: new Date(m.createdAt) })),
    },
  };
}

const STRINGS = {
  en: {
    subject: (account: string) => `Your conversation with ${account}`,
    hello: (name: string | null) => (name ? `Hello ${name},` : 'Hello,'),
    intro: (account: string) => `Here is your conversation with ${account}, as you asked.`,
    you: 'You',
    team: 'the team',
    picture: 'Picture',
    file: 'File',
    linksUntil: (date: string) => `Links to pictures and files work until ${date}.`,
    reply: 'You can answer this email to write in the conversation.',
  },
  nl: {
    subject: (account: string) => `Je gesprek met ${account}`,
    hello: (name: string | null) => (name ? `Hallo ${name},` : 'Hallo,'),
    intro: (account: string) => `Hier is je gesprek met ${account}, zoals gevraagd.`,
    you: 'Jij',
    team: 'het team',
    picture: 'Afbeelding',
    file: 'Bestand',
    linksUntil: (date: string) => `Links naar afbeeldingen en bestanden werken tot ${date}.`,
    reply: 'Je kunt op deze e-mail antwoorden om in het gesprek te schrijven.',
  },
} as const;

export function renderTranscript(
  transcript: Transcript,
  options: LinkOptions & { replyable: boolean },
  now = Date.now(),
): { subject: string; text: string; html: string } {
  const lang = transcript.language === 'nl' ? 'nl' : 'en';
  const t = STRINGS[lang];
  const root = options.publicUrl.replace(/\/+$/, '');
  const exp = Math.floor(now / 1000) + options.linkTtlSeconds;
  const mediaLink = (path: string) =>
    `${root}/email/media/${signLink(options.linkSecret, { k: 'media', a: transcript.accountId, u: transcript.userId, p: path, exp })}`;
  // A date and time readers can place without knowing the server's zone.
  const when = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const blocks = transcript.messages.map((m) => ({
    who: m.typeId === MessageType.user ? t.you : (m.agent?.name ?? t.team),
    when: when(m.createdAt),
    parts: partsOf(m, mediaLink, t),
  }));
  const hasLinks = transcript.messages.some((m) => m.media || m.content?.carousel.some((i) => i.media));
  const until = new Date(exp * 1000).toISOString().slice(0, 10);
  const subject = t.subject(transcript.accountName);
  const text = [
    t.hello(transcript.name),
    '',
    t.intro(transcript.accountName),
    '',
    ...blocks.flatMap((b) => [
      `${b.who} (${b.when}):`,
      ...b.parts.map((p) => (p.kind === 'link' ? `${p.text}: ${p.url ?? ''}` : p.text)),
      '',
    ]),
    ...(hasLinks ? [t.linksUntil(until), ''] : []),
    ...(options.replyable ? [t.reply, ''] : []),
  ].join('\n');
  const paragraph = (p: Part) =>
    p.kind === 'link'
      ? `<p style="margin: 0.25em 0"><a href="${escapeHtml(p.url ?? '')}">${escapeHtml(p.text)}</a></p>`
      : `<p style="margin: 0.25em 0">${escapeHtml(p.text).replace(/\n/g, '<br>')}</p>`;
  const html = [
    `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    '<body style="font-family: sans-serif; line-height: 1.5">',
    `<p>${escapeHtml(t.hello(transcript.name))}</p>`,
    `<p>${escapeHtml(t.intro(transcript.accountName))}</p>`,
    ...blocks.map(
      (b) =>
        `<div style="margin: 1em 0"><p style="margin: 0"><strong>${escapeHtml(b.who)}</strong> <small>${escapeHtml(b.when)}</small></p>${b.parts.map(paragraph).join('')}</div>`,
    ),
    ...(hasLinks ? [`<p><small>${escapeHtml(t.linksUntil(until))}</small></p>`] : []),
    ...(options.replyable ? [`<p><small>${escapeHtml(t.reply)}</small></p>`] : []),
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}
