// The requests of the three Parley client libraries, byte for byte as each sends them (web
// 2.0.0-alpha.22, Android 3.13.0, iOS 4.4.2): base URLs with their version prefixes, headers,
// device ids, body encodings and multipart layouts. Facts read from the libraries, written as
// fixtures of our own; the libraries' code is not here. Every answer is kept with its request
// and can be held to the shared schema (parley-shapes.ts) with expectAnswer().
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { answerProblems, type AnswerKind } from './parley-shapes.ts';

// ---------------------------------------------------------------------------------------------
// The wire

export interface WireRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'OPTIONS';
  url: string;
  headers: Record<string, string>;
  /** A string body without a content-type header gets text/plain;charset=UTF-8, as in browsers. */
  body?: string | Buffer | FormData;
}

export interface WireAnswer {
  request: WireRequest;
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
}

/** The answer's body as JSON of a known shape (after expectAnswer has held it to the schema). */
export function body<T = Record<string, unknown>>(answer: WireAnswer): T {
  return answer.json as T;
}

export async function exchange(request: WireRequest): Promise<WireAnswer> {
  const response = await fetch(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body instanceof Buffer ? new Uint8Array(request.body) : request.body,
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    // Media and preflights.
  }
  return { request, status: response.status, headers: response.headers, bytes, text, json };
}

function describeRequest(request: WireRequest): string {
  const shown = typeof request.body === 'string' ? ` ${request.body.slice(0, 300)}` : request.body ? ' <binary>' : '';
  return `${request.method} ${request.url}${shown}`;
}

/**
 * Holds an answer to what the libraries require of `kind` (see parley-shapes.ts): status class,
 * JSON content type, every key and type. Lists every problem at once, with the request.
 */
export function expectAnswer(kind: AnswerKind, answer: WireAnswer, what = ''): WireAnswer {
  const problems = answerProblems(kind, {
    status: answer.status,
    contentType: answer.headers.get('content-type'),
    json: answer.json,
  });
  expect(
    problems,
    `${what ? `${what}: ` : ''}${describeRequest(answer.request)} → ${answer.status} ${answer.text.slice(0, 600)}`,
  ).to.deep.equal([]);
  return answer;
}

/** An error answer with its code first (what Android hands to onFailure, and web shows by). */
export function expectError(answer: WireAnswer, status: number, code: string, what = ''): WireAnswer {
  expectAnswer('error', answer, what);
  expect(answer.status, `${what} ${answer.text}`).to.equal(status);
  expect(body<{ notifications: Array<{ message: string }> }>(answer).notifications[0]?.message, what).to.equal(code);
  return answer;
}

// ---------------------------------------------------------------------------------------------
// Files as the apps pick them

/** A JPEG as far as any type detector looks (SOI, a JFIF APP0 segment, EOI): what the cameras give. */
export const JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xd9,
]);

/** Android names its copies of picked files and camera shots `yyyyMMdd_HHmmss.<ext>` (local time). */
export function androidFileName(at: Date, extension: string): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}${two(at.getMonth() + 1)}${two(at.getDate())}_${two(at.getHours())}${two(at.getMinutes())}${two(at.getSeconds())}.${extension}`;
}

// ---------------------------------------------------------------------------------------------
// Web: <apiDomain>/clientApi/v1.9, fetch from a page of another origin

export const WEB = {
  prefix: '/clientApi/v1.9',
  /** `version` on POST /devices: the package version without its pre-release part. */
  version: '2.0.0',
  deviceType: 3,
} as const;

export interface WebOptions {
  baseUrl: string;
  accountIdentification: string;
  /** The page the widget is on: `referer` in bodies, and the browser's Origin and Referer headers. */
  page?: string;
}

export class WebLibrary {
  /** uuidv4, lowercase, kept in localStorage (`deviceInformation`) and a cookie. */
  deviceIdentification = randomUUID();
  /** `parleySettings.authHeader`; sent as an empty header when there is none. */
  authorization = '';
  readonly page: string;
  readonly preflights: WireAnswer[] = [];

  constructor(private readonly options: WebOptions) {
    this.page = options.page ?? 'https://shop.example/products/42?utm_source=newsletter&utm_medium=email';
  }

  get origin(): string {
    return new URL(this.page).origin;
  }

  private url(path: string): string {
    return `${this.options.baseUrl}${WEB.prefix}/${path}`;
  }

  /** Set on every call by the library: identification and Authorization (empty when anonymous). */
  headers(): Record<string, string> {
    return {
      'x-iris-identification': `${this.options.accountIdentification}:${this.deviceIdentification}`,
      Authorization: this.authorization,
      // Added by the browser to a cross-origin fetch (strict-origin-when-cross-origin).
      Origin: this.origin,
      Referer: `${this.origin}/`,
    };
  }

  /** The browser asks first: the library's custom headers make every call non-simple. */
  private async call(method: 'GET' | 'POST' | 'PUT', path: string, bodyValue?: string | FormData): Promise<WireAnswer> {
    const preflight = await exchange({
      method: 'OPTIONS',
      url: this.url(path),
      headers: {
        Origin: this.origin,
        'Access-Control-Request-Method': method,
        'Access-Control-Request-Headers': 'authorization,x-iris-identification',
      },
    });
    this.preflights.push(preflight);
    return exchange({ method, url: this.url(path), headers: this.headers(), ...(bodyValue === undefined ? {} : { body: bodyValue }) });
  }

  /** POST /devices: JSON.stringify drops the push keys it leaves undefined. */
  subscribeDevice(userAdditionalInformation?: Record<string, string>): Promise<WireAnswer> {
    return this.call(
      'POST',
      'devices',
      JSON.stringify({
        pushToken: undefined,
        pushType: undefined,
        pushEnabled: undefined,
        userAdditionalInformation,
        type: WEB.deviceType,
        version: WEB.version,
        referer: this.page,
      }),
    );
  }

  sendMessage(message: string): Promise<WireAnswer> {
    return this.call('POST', 'messages', JSON.stringify({ message, referer: this.page }));
  }

  /** One field, `media`, with the user's File: its original name and the type the browser gives it. */
  uploadMedia(bytes: Buffer, fileName: string, type: string): Promise<WireAnswer> {
    const form = new FormData();
    form.append('media', new Blob([new Uint8Array(bytes)], { type }), fileName);
    return this.call('POST', 'media', form);
  }

  /** The uploaded file's original name becomes the description. */
  sendMedia(mediaId: string, fileName: string): Promise<WireAnswer> {
    return this.call('POST', 'messages', JSON.stringify({ media: { id: mediaId, description: fileName }, referer: this.page }));
  }

  getMessages(id?: number, filter?: 'before' | 'after'): Promise<WireAnswer> {
    return this.call('GET', id === undefined ? 'messages' : `messages/${filter}:${id}`);
  }

  getMedia(year: string, month: string, day: string, fileName: string): Promise<WireAnswer> {
    return this.call('GET', `media/${year}/${month}/${day}/${fileName}`);
  }

  getUnreadMessagesCount(): Promise<WireAnswer> {
    return this.call('GET', 'messages/unseen/count');
  }

  updateMessagesStatus(status: 2 | 3 | 4, messageIds: number[]): Promise<WireAnswer> {
    return this.call('PUT', `messages/status/${status}`, JSON.stringify({ messageIds }));
  }

  /** After `device_requires_authorization`, on the next send: a fresh uuid for a fresh device. */
  newDeviceIdentification(): string {
    this.deviceIdentification = randomUUID();
    return this.deviceIdentification;
  }
}

/** The content types the web library accepts for a media answer (a substring test). */
export const WEB_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'application/pdf', 'text/plain', 'text/csv'] as const;

// ---------------------------------------------------------------------------------------------
// Android: Retrofit scalars + Gson, url + path concatenated, path ends with a slash

export const ANDROID = {
  /** `ParleyNetwork` default path; the app may pick any of 1.2–1.9 (1.2–1.5 deprecated). */
  path: 'clientApi/v1.9/',
  versions: ['1.2', '1.3', '1.4', '1.5', '1.6', '1.7', '1.8', '1.9'] as const,
  version: '3.13.0',
  deviceType: 1,
  /** FCM. */
  pushType: 6,
  /** Retrofit's scalars converter. */
  textType: 'text/plain; charset=UTF-8',
} as const;

/**
 * Gson's default output: compact, null fields left out, and HTML-safe: < > & = ' as \u escapes
 * (so a referrer's query string arrives as `\u003d` and `\u0026`).
 */
export function gson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&='\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A part as OkHttp writes it: disposition, type, length, then the bytes; `--B--\r\n` at the end. */
export function okHttpMultipart(boundary: string, field: string, fileName: string, partType: string, bytes: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${boundary}\r\n` +
        `Content-Disposition: form-data; name="${field}"; filename="${fileName}"\r\n` +
        `Content-Type: ${partType}\r\n` +
        `Content-Length: ${bytes.length}\r\n` +
        '\r\n',
      'utf8',
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8'),
  ]);
}

/** The Message model as Gson writes it for POST messages: internal keys included. */
export interface AndroidMessage {
  uuid: string;
  time: number;
  message?: string;
  media?: { id: string; filename: string; mimeType: string };
  typeId: 1 | 4;
  send_status: number;
}

export interface AndroidOptions {
  /** `ParleyNetwork.url`, ending in a slash. */
  url: string;
  secret: string;
  path?: string;
}

export class AndroidLibrary {
  /** `UUID.randomUUID().toString()`, lowercase, stored once in SharedPreferences "parley". */
  uniqueDeviceIdentifier = randomUUID();
  /** `Parley.setUserInformation(token)`; only sent when set. */
  userAuthorization: string | null = null;
  userAdditionalInformation: Record<string, string> = {};
  pushToken: string | null = `fcm-${randomUUID()}`;
  referrer: string | null = 'https://app.example/orders?id=1001&tab=help';
  readonly base: string;

  constructor(private readonly options: AndroidOptions) {
    this.base = options.url + (options.path ?? ANDROID.path);
  }

  /** The interceptor's headers: identification, and Authorization only when signed in. */
  headers(): Record<string, string> {
    return {
      'x-iris-identification': `${this.options.secret}:${this.uniqueDeviceIdentifier}`,
      ...(this.userAuthorization === null ? {} : { Authorization: this.userAuthorization }),
    };
  }

  private request(method: 'GET' | 'POST' | 'PUT', url: string, text?: string): Promise<WireAnswer> {
    return exchange({
      method,
      url,
      headers: { ...this.headers(), ...(text === undefined ? {} : { 'Content-Type': ANDROID.textType }) },
      ...(text === undefined ? {} : { body: Buffer.from(text, 'utf8') }),
    });
  }

  /** The Device model: push keys, additional information (always, {} when empty), referrer. */
  deviceBody(): string {
    return gson({
      ...(this.pushToken === null ? {} : { pushToken: this.pushToken }),
      pushType: ANDROID.pushType,
      userAdditionalInformation: this.userAdditionalInformation,
      ...(this.referrer === null ? {} : { referrer: this.referrer }),
      type: ANDROID.deviceType,
      version: ANDROID.version,
    });
  }

  register(): Promise<WireAnswer> {
    return this.request('POST', `${this.base}devices`, this.deviceBody());
  }

  findAll(): Promise<WireAnswer> {
    return this.request('GET', `${this.base}messages`);
  }

  /** `url + path + paging.before`, verbatim: `…/clientApi/v1.9//messages/before:N`. */
  getOlder(pagingBefore: string): Promise<WireAnswer> {
    return this.request('GET', this.base + pagingBefore);
  }

  /** After a push naming the message. */
  get(messageId: number): Promise<WireAnswer> {
    return this.request('GET', `${this.base}messages/${messageId}`);
  }

  send(message: AndroidMessage): Promise<WireAnswer> {
    return this.request('POST', `${this.base}messages`, gson(message));
  }

  /** OkHttp multipart, field `media`, the part typed by the file's extension (`*\/*` for any other). */
  sendMedia(fileName: string, partType: string, bytes: Buffer, boundary = randomUUID()): Promise<WireAnswer> {
    return exchange({
      method: 'POST',
      url: `${this.base}media`,
      headers: { ...this.headers(), 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      body: okHttpMultipart(boundary, 'media', fileName, partType, bytes),
    });
  }

  /** API 1.5 and older: the file through POST messages, field `image`. */
  sendLegacyImage(fileName: string, partType: string, bytes: Buffer, boundary = randomUUID()): Promise<WireAnswer> {
    return exchange({
      method: 'POST',
      url: `${this.base}messages`,
      headers: { ...this.headers(), 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      body: okHttpMultipart(boundary, 'image', fileName, partType, bytes),
    });
  }

  getUnseen(): Promise<WireAnswer> {
    return this.request('GET', `${this.base}messages/unseen/count`);
  }

  updateStatusRead(messageIds: number[]): Promise<WireAnswer> {
    return this.request('PUT', `${this.base}messages/status/4`, gson({ messageIds }));
  }

  /** Glide and DownloadManager: `media/` + the id without its first two segments. */
  media(mediaId: string): Promise<WireAnswer> {
    const forUrl = mediaId.includes('/') ? mediaId.split('/').slice(2).join('/') : mediaId;
    return this.request('GET', `${this.base}media/${forUrl}`);
  }

  /** The Message of a text the user typed (typeId 1), or of `Parley.send(text, silent = true)` (4). */
  static text(text: string, silent = false): AndroidMessage {
    return { uuid: randomUUID(), time: Math.floor(Date.now() / 1000), message: text, typeId: silent ? 4 : 1, send_status: 0 };
  }

  /** The Message after its upload: the media object replaces the local file. */
  static media(id: string, fileName: string, mimeType: string): AndroidMessage {
    return {
      uuid: randomUUID(),
      time: Math.floor(Date.now() / 1000),
      media: { id, filename: fileName, mimeType },
      typeId: 1,
      send_status: 0,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// iOS: <url>/clientApi/v1.9 + appendingPathComponent, JSON on every request

export const IOS = {
  prefix: '/clientApi/v1.9',
  version: '4.4.2',
  deviceType: 2,
  /** Set on every request, GETs and body-less POSTs included; multipart overrides it. */
  contentType: 'application/json; charset=utf-8',
} as const;

/** JSONEncoder's default output: compact, nil keys left out, `/` escaped as `\/`. */
export function jsonEncoder(value: unknown): string {
  return JSON.stringify(value).replaceAll('/', '\\/');
}

/** MultipartFormData as iOS builds it by hand: no Content-Length, and NO CRLF after `--B--`. */
export function iosMultipart(boundary: string, fileName: string, partType: string, bytes: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="media"; filename="${fileName}"\r\nContent-Type: ${partType}\r\n\r\n`,
      'utf8',
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--`, 'utf8'),
  ]);
}

/** NewMessageRequest: `type` (always 1, silent messages too), never `typeId`. */
export interface IosMessage {
  time: number;
  message?: string;
  media?: { id: string; mimeType: string };
  type: 1;
  referrer?: string;
}

export interface IosOptions {
  baseUrl: string;
  secret: string;
}

export class IosLibrary {
  /** `UUID().uuidString`: UPPERCASE, stored once in UserDefaults `parley.device_uuid`. */
  deviceId = randomUUID().toUpperCase();
  userAuthorization: string | null = null;
  userAdditionalInformation: Record<string, string> | null = null;
  pushToken: string | null = `fcm-${randomUUID()}`;
  pushType: 4 | 5 | 6 | null = 6;
  pushEnabled = true;
  referrer: string | null = 'https://app.example/support';

  constructor(private readonly options: IosOptions) {}

  private url(path: string): string {
    return `${this.options.baseUrl}${IOS.prefix}/${path}`;
  }

  headers(): Record<string, string> {
    return {
      'x-iris-identification': `${this.options.secret}:${this.deviceId}`,
      'Content-Type': IOS.contentType,
      ...(this.userAuthorization === null ? {} : { Authorization: this.userAuthorization }),
    };
  }

  private request(method: 'GET' | 'POST' | 'PUT', path: string, json?: string): Promise<WireAnswer> {
    return exchange({
      method,
      url: this.url(path),
      headers: this.headers(),
      ...(json === undefined ? {} : { body: Buffer.from(json, 'utf8') }),
    });
  }

  /** Device.encode: nil keys left out; pushEnabled always there. */
  deviceBody(): string {
    return jsonEncoder({
      ...(this.pushToken === null ? {} : { pushToken: this.pushToken }),
      ...(this.pushType === null ? {} : { pushType: this.pushType }),
      pushEnabled: this.pushEnabled,
      ...(this.userAdditionalInformation === null ? {} : { userAdditionalInformation: this.userAdditionalInformation }),
      type: IOS.deviceType,
      version: IOS.version,
      ...(this.referrer === null ? {} : { referrer: this.referrer }),
    });
  }

  register(): Promise<WireAnswer> {
    return this.request('POST', 'devices', this.deviceBody());
  }

  findAll(): Promise<WireAnswer> {
    return this.request('GET', 'messages');
  }

  findBefore(id: number): Promise<WireAnswer> {
    return this.request('GET', `messages/before:${id}`);
  }

  findAfter(id: number): Promise<WireAnswer> {
    return this.request('GET', `messages/after:${id}`);
  }

  find(id: number): Promise<WireAnswer> {
    return this.request('GET', `messages/${id}`);
  }

  store(message: IosMessage): Promise<WireAnswer> {
    return this.request('POST', 'messages', jsonEncoder(message));
  }

  /** The file is named by a bare UUID, with no extension; the boundary is an uppercase UUID too. */
  upload(
    partType: string,
    bytes: Buffer,
    fileName = randomUUID().toUpperCase(),
    boundary = randomUUID().toUpperCase(),
  ): Promise<WireAnswer> {
    return exchange({
      method: 'POST',
      url: this.url('media'),
      headers: { ...this.headers(), 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      body: iosMultipart(boundary, fileName, partType, bytes),
    });
  }

  /** `media/` + URL(string: media.id).pathComponents without the first two (a leading `/` is one). */
  findMedia(mediaId: string): Promise<WireAnswer> {
    const components = [...(mediaId.startsWith('/') ? ['/'] : []), ...mediaId.split('/').filter(Boolean)];
    return this.request('GET', `media/${components.slice(2).join('/')}`);
  }

  getUnseen(): Promise<WireAnswer> {
    return this.request('GET', 'messages/unseen/count');
  }

  updateStatusRead(messageIds: number[]): Promise<WireAnswer> {
    return this.request('PUT', 'messages/status/4', jsonEncoder({ messageIds }));
  }

  /** No body at all, but the JSON content type all the same. */
  fire(event: 'startTyping' | 'stopTyping'): Promise<WireAnswer> {
    return this.request('POST', `services/event/${event}`);
  }

  text(text: string): IosMessage {
    return { time: Math.floor(Date.now() / 1000), message: text, type: 1, ...(this.referrer === null ? {} : { referrer: this.referrer }) };
  }

  media(id: string, mimeType: string): IosMessage {
    return {
      time: Math.floor(Date.now() / 1000),
      media: { id, mimeType },
      type: 1,
      ...(this.referrer === null ? {} : { referrer: this.referrer }),
    };
  }
}

// ---------------------------------------------------------------------------------------------
// The agent side: a Service answering through the Service API with its key

export const ADA = { id: 7, name: 'Ada', avatar: 'https://cdn.example/ada.png' } as const;

/** An agent answer with every rich part the libraries render beside the text. */
export const RICH_ANSWER = {
  message: 'Which order is it about?',
  title: 'Your orders',
  buttons: [
    { title: 'Track order 1001', payload: 'https://shop.example/track/1001?src=chat', type: 'webUrl' },
    { title: 'Call us', payload: 'tel:+31612345678', type: 'phoneNumber' },
    { title: 'Order 1001', payload: 'It is about order 1001', type: 'reply' },
  ],
  quickReplies: ['Order 1001', 'Another order'],
  agent: ADA,
} as const;

/** A carousel of two cards, each with a title, text and a button. */
export const CAROUSEL_ANSWER = {
  carousel: [
    {
      title: 'Blue chair',
      message: 'In stock',
      buttons: [{ title: 'View', payload: 'https://shop.example/p/blue-chair', type: 'webUrl' }],
    },
    { title: 'Red chair', message: 'Back in May', buttons: [{ title: 'This one', payload: 'Red chair', type: 'reply' }] },
  ],
  agent: ADA,
} as const;

export class ServiceDesk {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  private post(path: string, json: unknown): Promise<WireAnswer> {
    return exchange({
      method: 'POST',
      url: `${this.baseUrl}${path}`,
      headers: { Authorization: `Bearer ${this.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(json),
    });
  }

  /** An agent message (201); its id. */
  async say(userId: number, message: Record<string, unknown>): Promise<number> {
    const answer = await this.post(`/users/${userId}/messages`, message);
    expect(answer.status, answer.text).to.equal(201);
    return body<{ data: { id: number } }>(answer).data.id;
  }

  async typing(userId: number, isTyping: boolean): Promise<void> {
    const answer = await this.post(`/users/${userId}/typing`, { isTyping, agent: ADA });
    expect(answer.status, answer.text).to.equal(200);
  }
}

/** The operator who answers from the dashboard in the compatibility tests: a name and an https avatar. */
export const BEA = { name: 'Bea from the team', avatar: 'https://cdn.example/bea.png' } as const;

/**
 * An operator of the team inbox answering through the Admin API, as the dashboard does: an
 * operator of its own (conversations:reply on the account) with BEA's name and avatar.
 */
export class TeamDesk {
  private constructor(
    private readonly baseUrl: string,
    private readonly accountId: number,
    private readonly token: string,
    /** The operator's id: the agent id clients see. */
    readonly operatorId: number,
  ) {}

  static async signIn(baseUrl: string, adminToken: string, accountId: number): Promise<TeamDesk> {
    const email = `team-${randomUUID()}@palaver.test`;
    const json = (method: 'POST' | 'PATCH', path: string, value: unknown, token?: string) =>
      exchange({
        method,
        url: `${baseUrl}/adminApi${path}`,
        headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(value),
      });
    const created = await json(
      'POST',
      '/operators',
      { email, password: 'team password', grants: [{ permission: 'conversations:reply', accountId }] },
      adminToken,
    );
    expect(created.status, created.text).to.equal(201);
    const login = await json('POST', '/login', { email, password: 'team password' });
    expect(login.status, login.text).to.equal(200);
    const token = body<{ data: { token: string } }>(login).data.token;
    const named = await json('PATCH', '/session', { displayName: BEA.name, avatarUrl: BEA.avatar }, token);
    expect(named.status, named.text).to.equal(200);
    return new TeamDesk(baseUrl, accountId, token, body<{ data: { id: number } }>(created).data.id);
  }

  /** An answer from the dashboard (201); its id. */
  async say(userId: number, message: { message?: string; media?: { id: string; description?: string } }): Promise<number> {
    const answer = await exchange({
      method: 'POST',
      url: `${this.baseUrl}/adminApi/accounts/${this.accountId}/users/${userId}/messages`,
      headers: { Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(message),
    });
    expect(answer.status, answer.text).to.equal(201);
    return body<{ data: { id: number } }>(answer).data.id;
  }

  /** A file from the dashboard (201); the media id its answer names. */
  async upload(userId: number, bytes: Buffer, name: string, type: string): Promise<string> {
    const form = new FormData();
    form.append('media', new Blob([bytes], { type }), name);
    const answer = await exchange({
      method: 'POST',
      url: `${this.baseUrl}/adminApi/accounts/${this.accountId}/users/${userId}/media`,
      headers: { Authorization: `Bearer ${this.token}` },
      body: form,
    });
    expect(answer.status, answer.text).to.equal(201);
    return body<{ data: { media: string } }>(answer).data.media;
  }
}

// ---------------------------------------------------------------------------------------------
// What the tests read back (once an answer has passed expectAnswer)

export interface ParleyMedia {
  id: string;
  mimeType: string;
  year: string;
  month: string;
  day: string;
  filename: string;
  description: string;
}

export interface ParleyAgent {
  id: number;
  name: string;
  avatar: string | null;
  isTyping: number | null;
}

export interface ParleyMessage {
  id: number;
  time: number;
  message: string | null;
  image: string | null;
  typeId: number;
  agent: ParleyAgent | null;
  carousel: Array<Omit<ParleyMessage, 'id'>>;
  quickReplies: string[];
  title: string | null;
  media: ParleyMedia | null;
  buttons: Array<{ title: string; payload: string; type: string }>;
  status: number;
}

export interface ParleyPage {
  data: ParleyMessage[];
  paging: { before: string; after: string };
  agent: ParleyAgent | null;
  stickyMessage: string | null;
  welcomeMessage: string | null;
}

export const page = (answer: WireAnswer) => body<ParleyPage>(answer);
export const dataOf = <T>(answer: WireAnswer) => body<{ data: T }>(answer).data;
