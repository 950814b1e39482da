// One entry of the conversation as a list item: the visitor's messages on the right (pending,
// failed with a Retry, seen), agents' on the left with their name and avatar, system messages in
// the middle; text, images, files, buttons and carousels.
import type { Outgoing } from '../conversation.ts';
import type { Strings } from '../strings.ts';
import { TYPE, type AgentView, type ButtonView, type CarouselCard, type ChatMessage, type MediaView } from '../types.ts';
import { formatBytes, h, icon, ICONS } from './dom.ts';

/** A conversation file as the page has it: an object URL, and the size of the bytes behind it. */
export interface FileLink {
  url: string;
  size: number;
}

export interface MessageActions {
  strings: Strings;
  /** A conversation file, downloaded with the visitor's headers once. */
  file(media: MediaView): Promise<FileLink>;
  /** The visitor's own file of a confirmed message, if this page still has it. */
  localFile(messageId: number): File | undefined;
  /** False once the chat is unavailable: a Retry there could only fail again. */
  canRetry(): boolean;
  /** A reply button's or quick reply's text, sent as the visitor's message. */
  reply(text: string): void;
  retry(outgoing: Outgoing): void;
  /** Drops a message Palaver refused for good from the list. */
  remove(outgoing: Outgoing): void;
}

const isImage = (mimeType: string) => mimeType.startsWith('image/');
const mediaPath = (m: MediaView) => `${m.year}/${m.month}/${m.day}/${m.filename}`;

/** Only web addresses open from a message: a `javascript:` payload from a Service never runs. */
function safeUrl(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : null;
  } catch {
    return null;
  }
}

/** Avatar URLs that failed to load: the initials from then on, not a request at every redraw. */
const brokenAvatars = new Set<string>();

export function avatar(agent: AgentView | null, fallback: string): HTMLElement {
  const name = agent?.name || fallback;
  const initials = h('span', { class: 'avatar', 'aria-hidden': 'true' }, name.trim().charAt(0).toUpperCase());
  const url = agent?.avatar ? safeUrl(agent.avatar) : null;
  if (!url || brokenAvatars.has(url)) return initials;
  const image = h('img', { class: 'avatar', src: url, alt: '' });
  image.addEventListener(
    'error',
    () => {
      brokenAvatars.add(url);
      image.replaceWith(initials);
    },
    { once: true },
  );
  return image;
}

function time(seconds: number): HTMLElement {
  const date = new Date(seconds * 1000);
  return h('time', { datetime: date.toISOString() }, date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }));
}

function imageOf(media: MediaView, file: Promise<FileLink>): HTMLElement {
  const image = h('img', { class: 'image', alt: media.description || media.filename });
  file.then(
    ({ url }) => {
      image.src = url;
    },
    () => image.replaceWith(h('span', {}, media.description || media.filename)),
  );
  return image;
}

// The size is that of the bytes the page holds (the visitor's own file, or the download):
// reading it from the object URL again would be a fetch of a blob: address, which the
// connect-src of the documented Content-Security-Policy refuses.
function fileOf(media: MediaView, file: Promise<FileLink>, strings: Strings): HTMLElement {
  const name = media.description || media.filename;
  const sizeText = h('span', { class: 'size' });
  const link = h(
    'a',
    { class: 'file', download: name, title: `${strings.download} ${name}` },
    icon(ICONS.file),
    h('span', { class: 'name' }, name),
    sizeText,
  );
  file.then(
    ({ url, size }) => {
      link.href = url;
      sizeText.textContent = formatBytes(size);
    },
    () => link.removeAttribute('href'),
  );
  return link;
}

/** One object URL per local file, however often its message is drawn again. */
const localUrls = new WeakMap<File, string>();

function localUrl(file: File): string {
  let url = localUrls.get(file);
  if (!url) {
    url = URL.createObjectURL(file);
    localUrls.set(file, url);
  }
  return url;
}

function mediaOf(media: MediaView, actions: MessageActions, local: File | undefined): HTMLElement {
  const file = local ? Promise.resolve({ url: localUrl(local), size: local.size }) : actions.file(media);
  return isImage(media.mimeType) ? imageOf(media, file) : fileOf(media, file, actions.strings);
}

/** `of`: the card the buttons belong to, so that each card's "Choose" has a name of its own for a screen reader. */
function buttonsOf(buttons: readonly ButtonView[], actions: MessageActions, of: string | null = null): HTMLElement | null {
  if (buttons.length === 0) return null;
  const list = h('div', { class: 'buttons' });
  for (const button of buttons) {
    const label = of ? `${button.title}: ${of}` : undefined;
    if (button.type === 'reply') {
      const element = h('button', { class: 'action', type: 'button', 'aria-label': label }, button.title);
      element.addEventListener('click', () => actions.reply(button.payload));
      list.append(element);
    } else if (button.type === 'phoneNumber') {
      list.append(
        h('a', { class: 'action', href: `tel:${button.payload.replace(/^tel:(\/\/)?/, '')}`, 'aria-label': label }, button.title),
      );
    } else {
      const url = safeUrl(button.payload);
      if (url)
        list.append(
          h('a', { class: 'action', href: url, target: '_blank', rel: 'noopener noreferrer', 'aria-label': label }, button.title),
        );
    }
  }
  return list;
}

function cardOf(card: CarouselCard, actions: MessageActions): HTMLElement {
  return h(
    'div',
    { class: 'card' },
    card.media ? mediaOf(card.media, actions, undefined) : null,
    card.title ? h('strong', { class: 'title' }, card.title) : null,
    card.message ? h('div', {}, card.message) : null,
    buttonsOf(card.buttons, actions, card.title ?? card.message),
  );
}

function bodyOf(text: string | null, title: string | null, media: HTMLElement | null, extra: Array<HTMLElement | null>): HTMLElement {
  const bubble = h('div', { class: media && !text && !title && media.tagName === 'IMG' ? 'bubble has-image' : 'bubble' });
  if (title) bubble.append(h('strong', { class: 'title' }, title));
  if (media) bubble.append(media);
  if (text) bubble.append(text);
  for (const part of extra) if (part) bubble.append(part);
  return bubble;
}

export interface MessageLook {
  /** The visitor's newest message: it says when it was seen. */
  showSeen: boolean;
  /** An agent message right after another of the same agent: no name, no avatar. */
  follows: boolean;
}

export function renderMessage(message: ChatMessage, actions: MessageActions, { showSeen, follows }: MessageLook): HTMLLIElement {
  const { strings } = actions;
  if (message.typeId === TYPE.info || message.typeId === TYPE.agentSystem) {
    return h(
      'li',
      { class: 'msg system', 'data-id': String(message.id) },
      h('div', { class: 'stack' }, h('div', { class: 'bubble' }, message.message ?? '')),
    );
  }
  const media = message.media ? mediaOf(message.media, actions, actions.localFile(message.id)) : null;
  // A row of cards that may be wider than the panel: reachable with the keyboard to scroll it.
  const carousel =
    message.carousel.length > 0
      ? h(
          'div',
          { class: 'carousel', role: 'group', 'aria-label': strings.cards, tabindex: '0' },
          ...message.carousel.map((card) => cardOf(card, actions)),
        )
      : null;
  // A message of cards alone has no bubble above them (it would be an empty one).
  const hasBody = Boolean(message.message || message.title || media || message.buttons.length > 0);
  const bubble = hasBody ? bodyOf(message.message, message.title, media, [buttonsOf(message.buttons, actions)]) : null;
  if (message.typeId === TYPE.user) {
    const meta = h(
      'div',
      { class: 'meta' },
      time(message.time),
      showSeen && message.status >= 4 ? h('span', {}, `· ${strings.seen}`) : null,
    );
    return h(
      'li',
      { class: 'msg visitor', 'data-id': String(message.id) },
      h('div', { class: 'stack' }, h('span', { class: 'sr-only' }, `${strings.you}:`), bubble, meta),
    );
  }
  const name = message.agent?.name || strings.agentFallback;
  return h(
    'li',
    { class: follows ? 'msg agent follows' : 'msg agent', 'data-id': String(message.id) },
    avatar(message.agent, strings.agentFallback),
    h('div', { class: 'stack' }, h('div', { class: 'author' }, name), bubble, carousel, h('div', { class: 'meta' }, time(message.time))),
  );
}

export function renderOutgoing(outgoing: Outgoing, actions: MessageActions): HTMLLIElement {
  const { strings } = actions;
  const media = outgoing.file
    ? mediaOf(
        {
          id: '',
          mimeType: outgoing.file.type,
          year: '',
          month: '',
          day: '',
          filename: outgoing.file.name,
          description: outgoing.file.name,
        },
        actions,
        outgoing.file,
      )
    : null;
  const meta = h('div', { class: 'meta' });
  if (outgoing.state === 'failed') {
    meta.append(h('span', { class: 'failed' }, outgoing.error ?? strings.notSent));
    // A refusal of the message itself (a file too large, of a refused kind) would be refused
    // again: the visitor can only drop it.
    if (outgoing.error !== null) {
      const remove = h('button', { type: 'button' }, strings.remove);
      remove.addEventListener('click', () => actions.remove(outgoing));
      meta.append(remove);
    } else if (actions.canRetry()) {
      const retry = h('button', { type: 'button' }, strings.retry);
      retry.addEventListener('click', () => actions.retry(outgoing));
      meta.append(retry);
    }
  } else {
    meta.append(h('span', {}, strings.sending));
  }
  return h(
    'li',
    { class: 'msg visitor pending', 'data-key': outgoing.key, 'aria-busy': outgoing.state === 'sending' ? 'true' : undefined },
    h('div', { class: 'stack' }, h('span', { class: 'sr-only' }, `${strings.you}:`), bodyOf(outgoing.text, null, media, []), meta),
  );
}

export { mediaPath };
