// A customer's web page on another origin than Palaver, served by a real HTTP server on
// loopback: Palaver listens on http://127.0.0.1:<port>, the page is http://localhost:<other port>,
// so every Client API call from it is cross-origin and goes through the browser's CORS checks.
// The page's script calls the Client API as the Parley web library does: fetch with the
// identification header and the site's custom header, JSON as a plain string with no
// content-type (the browser sends text/plain;charset=UTF-8), FormData with the field `media`.
// No library, so nothing smooths over what a real widget would meet.
import type { Envelope } from '../../src/presenters/envelope.ts';
import type { BrowserTest } from './browser.ts';
import { startLoopbackSite, type LoopbackSite } from './loopback-site.ts';

export const CLIENT_PREFIX = '/clientApi/v1.9';

export type HostPage = LoopbackSite;

// The script runs in Chromium, so it is plain JavaScript; state and helpers live on
// `window.chat`, which the tests call through page.evaluate.
const script = (api: string) => `
'use strict';
const API = ${JSON.stringify(api).replace(/</g, '\\u003c')};
const state = { account: '', deviceId: '', authorization: '' };
const log = document.getElementById('log');
document.getElementById('api').textContent = API;

function note(text, ok) {
  const item = document.createElement('li');
  item.className = ok ? 'ok' : 'fail';
  item.textContent = text;
  log.append(item);
}

function headers(extra) {
  const result = { 'x-iris-identification': state.account + ':' + state.deviceId, 'x-custom-site': location.host };
  if (state.authorization) result.Authorization = state.authorization;
  return Object.assign(result, extra);
}

async function send(method, path, init) {
  try {
    return await fetch(API + path, Object.assign({ method: method }, init));
  } catch (error) {
    note(method + ' ' + path + ': ' + error, false);
    throw error;
  }
}

async function call(method, path, body, extraHeaders) {
  const response = await send(method, path, { headers: headers(extraHeaders), body: body });
  // Only what CORS lets a page read: the safelisted headers and those the server exposes.
  const visible = {};
  response.headers.forEach(function (value, name) { visible[name] = value; });
  const text = await response.text();
  let json = null;
  try { json = JSON.parse(text); } catch (_) { /* not an envelope; the test sees null */ }
  note(method + ' ' + path + ': ' + response.status + (json && json.notifications.length ? ' ' + json.notifications.map(function (n) { return n.message; }).join(', ') : ''), response.ok);
  return { status: response.status, headers: visible, body: json };
}

function toBytes(base64) {
  return Uint8Array.from(atob(base64), function (c) { return c.charCodeAt(0); });
}

function toBase64(buffer) {
  let text = '';
  new Uint8Array(buffer).forEach(function (b) { text += String.fromCharCode(b); });
  return btoa(text);
}

window.chat = {
  configure: function (account, deviceId, authorization) {
    state.account = account;
    state.deviceId = deviceId;
    state.authorization = authorization || '';
  },
  // Parley's subscribeDevice always sends Authorization on /devices, empty when anonymous,
  // and the page's address as the referer.
  register: function (body) {
    const payload = Object.assign({ referer: location.href }, body);
    return call('POST', '/devices', JSON.stringify(payload), { Authorization: state.authorization });
  },
  send: function (body) {
    return call('POST', '/messages', JSON.stringify(Object.assign({ referer: location.href }, body)));
  },
  messages: function () {
    return call('GET', '/messages');
  },
  // A widget without a socket polls; this one until a message with that text is listed.
  pollMessages: async function (text, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answer = await call('GET', '/messages');
      const found = answer.body && answer.body.data.some(function (m) { return m.message === text; });
      if (found || Date.now() > deadline) return answer;
      await new Promise(function (resolve) { setTimeout(resolve, 200); });
    }
  },
  upload: function (base64, filename, type) {
    const form = new FormData();
    form.append('media', new Blob([toBytes(base64)], { type: type }), filename);
    return call('POST', '/media', form);
  },
  // Media needs the identification header, so a widget fetches it and shows it as a blob URL.
  fetchMedia: async function (media) {
    const path = '/media/' + [media.year, media.month, media.day, media.filename].join('/');
    const response = await send('GET', path, { headers: headers() });
    const buffer = await response.arrayBuffer();
    const type = response.headers.get('content-type');
    note('GET ' + path + ': ' + response.status + ' ' + type, response.ok);
    if (response.ok && type && type.indexOf('image/') === 0) {
      const image = document.createElement('img');
      image.alt = media.description || media.filename;
      image.src = URL.createObjectURL(new Blob([buffer], { type: type }));
      document.getElementById('media').append(image);
    }
    // content-disposition is readable only if the server exposes it (the file's name).
    const disposition = response.headers.get('content-disposition');
    return { status: response.status, contentType: type, disposition: disposition, base64: toBase64(buffer) };
  },
};
`;

const html = (api: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Palaver browser test: host page</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 2em; color: #1d1d1f; }
  li.ok { color: #176f2c; }
  li.fail { color: #b3261e; }
  img { width: 96px; image-rendering: pixelated; border: 1px solid #999; margin: 0.5em 0; }
</style>
</head>
<body>
<h1>A customer site on another origin</h1>
<p>Client API: <code id="api"></code></p>
<ol id="log" aria-label="Client API calls"></ol>
<div id="media"></div>
<script>${script(api)}</script>
</body>
</html>
`;

/** Serves the page for Palaver at `palaverUrl` (an http://127.0.0.1 address). */
export async function startHostPage(palaverUrl: string): Promise<HostPage> {
  const body = html(new URL(CLIENT_PREFIX, palaverUrl).toString());
  return startLoopbackSite((req, res) => {
    if (req.method === 'GET' && req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(body);
      return;
    }
    // No favicon, but no 404 either: the console should hold only what the test caused.
    res.writeHead(req.url === '/favicon.ico' ? 204 : 404).end();
  });
}

export interface PageAnswer<T = unknown> {
  status: number;
  /** The response headers the page's script could read. */
  headers: Record<string, string>;
  body: Envelope & { data: T };
}

export interface PageMedia {
  status: number;
  contentType: string | null;
  disposition: string | null;
  /** The fetched bytes, base64. */
  base64: string;
}

export interface ListedMessage {
  id: number;
  message: string | null;
  typeId: number;
  agent: { id: number; name: string } | null;
  media: { id: string; mimeType: string; year: string; month: string; day: string; filename: string; description: string | null } | null;
}

/** The page's `window.chat`, driven from a test. */
export class ChatPage {
  private constructor(
    private readonly test: BrowserTest,
    private readonly account: string,
  ) {}

  /** Opens the host page in the test's browser context as `deviceId` of `account`. */
  static async open(test: BrowserTest, host: HostPage, account: string, deviceId: string): Promise<ChatPage> {
    await test.page.goto(host.url);
    const chat = new ChatPage(test, account);
    await chat.configure(deviceId);
    return chat;
  }

  /** Switches identity as a widget does on login (authorization), logout or a new device id. */
  async configure(deviceId: string, authorization?: string): Promise<void> {
    await this.invoke('configure', this.account, deviceId, authorization ?? '');
  }

  register(body: Record<string, unknown> = {}) {
    return this.invoke<PageAnswer<{ userId: number }>>('register', body);
  }

  send(body: Record<string, unknown>) {
    return this.invoke<PageAnswer<{ messageId: string }>>('send', body);
  }

  messages() {
    return this.invoke<PageAnswer<ListedMessage[]>>('messages');
  }

  pollMessages(text: string, timeoutMs = 5_000) {
    return this.invoke<PageAnswer<ListedMessage[]>>('pollMessages', text, timeoutMs);
  }

  upload(bytes: Buffer, filename: string, type: string) {
    return this.invoke<PageAnswer<{ media: string }>>('upload', bytes.toString('base64'), filename, type);
  }

  fetchMedia(media: NonNullable<ListedMessage['media']>) {
    return this.invoke<PageMedia>('fetchMedia', media);
  }

  /**
   * Calls window.chat[name] in the page. A refused CORS call rejects there with a bare
   * "TypeError: Failed to fetch"; the reason is only in the console, so the error carries it.
   */
  private async invoke<T>(name: string, ...args: unknown[]): Promise<T> {
    try {
      const result = await this.test.page.evaluate(
        ([fn, list]) => {
          const chat = (globalThis as unknown as { chat: Record<string, (...a: unknown[]) => unknown> }).chat;
          const target = chat[fn];
          if (!target) throw new Error(`the page has no chat.${fn}`);
          return target(...list);
        },
        [name, args] as [string, unknown[]],
      );
      return result as T;
    } catch (error) {
      // Mocha prints the stack, so that is where the console goes.
      if (error instanceof Error)
        error.stack = `${error.stack ?? error.message}\n  browser console:\n    ${this.test.console.join('\n    ')}`;
      throw error;
    }
  }
}
