// A seeded, bounded fuzz run over every operation of /openapi.json and the client socket
// events: mutated bodies (wrong types, missing and extra fields, huge strings, NUL, lone
// surrogates, bad JSON, deep nesting), wrong content types and encodings, bad path parameters
// and query strings, and garbage identification and authorization headers. Whatever comes in,
// the server answers below 500, in the envelope with a snake_case code, and is still healthy
// afterwards. The seed is fixed: a failure replays the same way.
import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { DriverException } from '@mikro-orm/core';
import { expect } from 'chai';
import { io } from 'socket.io-client';
import { AppError } from '../src/errors.ts';
import { serializeError } from '../src/logger.ts';
import { client } from './support/http.ts';
import { TEST_ADMIN, sharedServer } from './support/server.ts';
import { WidgetSocket } from './support/sockets.ts';
import { tenant, type Tenant } from './support/tenant.ts';
import { Widget } from './support/widget.ts';

const SEED = 0x9a1a7e5;
const PER_OPERATION = 43;
const SOCKET_EVENTS = 300;
const CONCURRENCY = 16;
/** Each test's budget: thousands of requests take many minutes beside a CPU hog and another test file. */
const BUDGET_MS = 900_000;
/**
 * An answer may take as long as a loaded machine needs (no answer has a deadline of its own); what
 * is still unanswered when this little of the budget is left is named in the failure, rather than
 * ending in Mocha's bare timeout.
 */
const REPORT_MS = 60_000;
const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof prng>;

type Json = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  security: string[];
  body: Json | undefined;
  upload: string | undefined;
  params: Array<{ name: string; in: string; schema: Json }>;
}

function deepArray(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** Values of every wrong kind, for any field. */
function garbage(rng: Rng): unknown {
  switch (rng.int(22)) {
    case 0:
      return null;
    case 1:
      return 0;
    case 2:
      return -1;
    case 3:
      return 1e308;
    case 4:
      return 2 ** 63;
    case 5:
      return rng.chance(0.5);
    case 6:
      return [];
    case 7:
      return {};
    case 8:
      return '';
    case 9:
      return 'x'.repeat(rng.pick([256, 5001, 70_000]));
    case 10:
      return `a\u0000b`;
    case 11:
      return `lone \ud800 surrogate`;
    case 12:
      return `\udc00`;
    case 13:
      return '<script>alert(1)</script>';
    case 14:
      return "'; DROP TABLE users; --";
    case 15:
      return '𝒫alaver 🙂 \u202e';
    case 16:
      return [garbage(rng), `x\u0000`];
    case 17:
      return { nested: { deeper: garbage(rng) }, 'k\u0000': 1 };
    case 18:
      return 0.5;
    case 19:
      return '9'.repeat(40);
    case 20:
      return 'null';
    default:
      return ' \t\n ';
  }
}

/** A value a schema would take (roughly): the starting point that mutations spoil. */
function sample(schema: Json | undefined, rng: Rng, depth = 0): unknown {
  if (!schema || depth > 6) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return rng.pick(schema.enum as unknown[]);
  const options = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (options?.length) return sample(rng.pick(options), rng, depth + 1);
  const type = Array.isArray(schema.type) ? rng.pick(schema.type as string[]) : schema.type;
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
        if (((schema.required ?? []) as string[]).includes(name) || rng.chance(0.6)) out[name] = sample(property, rng, depth + 1);
      }
      return out;
    }
    case 'array':
      return Array.from({ length: rng.int(3) }, () => sample(schema.items as Json, rng, depth + 1));
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : 1;
      return min + rng.int(5);
    }
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    case 'string':
      if (schema.format === 'uuid') return '3f1c2a9e-8d7b-4c6a-9f0e-1b2c3d4e5f60';
      if (schema.format === 'email') return `fuzz${rng.int(1e6)}@palaver.test`;
      if (schema.format === 'uri') return `https://example.com/${rng.int(1e6)}`;
      return `fuzz ${rng.int(1e6)}`;
    default:
      return rng.chance(0.5) ? `fuzz ${rng.int(100)}` : rng.int(100);
  }
}

/** A body spoiled in one or two ways. */
function mutate(value: unknown, rng: Rng): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return rng.chance(0.5) ? garbage(rng) : value;
  const body: Json = { ...(value as Json) };
  const keys = Object.keys(body);
  switch (rng.int(6)) {
    case 0: // a field missing
      if (keys.length) delete body[rng.pick(keys)];
      break;
    case 1: // a field more
      body[rng.pick(['extra', '__proto__', 'constructor', 'x'.repeat(300), 'ü\u0000'])] = garbage(rng);
      break;
    case 2: // a field of the wrong type or content
    case 3:
      body[keys.length ? rng.pick(keys) : 'message'] = garbage(rng);
      break;
    case 4: // a nested field spoiled
      if (keys.length) body[rng.pick(keys)] = mutate(body[rng.pick(keys)], rng);
      break;
    default: // every field spoiled
      for (const key of keys) body[key] = garbage(rng);
  }
  return body;
}

const NAUGHTY_SEGMENTS = [
  'abc',
  '-1',
  '0',
  '1.5',
  '1e99',
  '99999999999999999999',
  '9007199254740993',
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%C0%AF',
  '%',
  '%E2%80%AE',
  '..%2F..%2Fetc%2Fpasswd',
  'null',
  'undefined',
  '%20',
  'x'.repeat(3000),
  '💥',
  '%F0%9F%92%A5',
  "'",
  '%22',
];

interface Built {
  path: string;
  init: RequestInit & { headers: Record<string, string> };
}

interface Credentials {
  widgets: Widget[];
  tenant: Tenant;
  userId: number;
  operator: string;
}

function buildRequest(op: Operation, rng: Rng, creds: Credentials): Built {
  const headers: Record<string, string> = {};
  // Credentials: right most of the time (so that validation is reached), garbage otherwise.
  const garbageAuth = rng.chance(0.2);
  if (op.security.includes('identification')) {
    const widget = rng.pick(creds.widgets);
    Object.assign(headers, widget.headers());
    if (garbageAuth) {
      const which = rng.int(7);
      if (which === 0) delete headers['x-iris-identification'];
      if (which === 1)
        headers['x-iris-identification'] = rng.pick([
          'nocolon',
          ':',
          `${creds.tenant.account.identification}:`,
          'x'.repeat(5000),
          'ä:ö',
          `unknown_acct:${'d'.repeat(20)}`,
        ]);
      if (which === 2) headers['x-iris-identification'] = `${creds.tenant.account.identification}:new-device-${rng.int(1e9)}`;
      if (which === 3) headers.authorization = Buffer.from(`id|key|${rng.int(1e10)}|${'ab'.repeat(64)}`).toString('base64');
      if (which === 4)
        headers.authorization = rng.pick([
          'Bearer',
          'Bearer ',
          '!!!',
          'x'.repeat(5000),
          '====',
          'Zm9v',
          Buffer.from('\u0000|\u0000|1|00').toString('base64'),
        ]);
      if (which === 5) headers.authorization = Buffer.from(`${'|'.repeat(rng.int(6))}`).toString('base64') || 'fA==';
      if (which === 6) headers['x-last-message-id'] = rng.pick(['-1', 'abc', '1e400', '99999999999999999999']);
    }
  } else if (op.security.includes('serviceKey') || op.security.includes('operatorToken')) {
    const token = op.security.includes('serviceKey') ? creds.tenant.service.apiKey : creds.operator;
    headers.authorization = garbageAuth
      ? rng.pick([
          '',
          'Bearer',
          'Bearer ',
          `Basic ${token}`,
          `Bearer ${token}x`,
          `Bearer ${'a'.repeat(5000)}`,
          `bearer\t${token}`,
          `Bearer ${token} extra`,
        ])
      : `Bearer ${token}`;
    if (headers.authorization === '') delete headers.authorization;
  }
  if (rng.chance(0.1)) headers['x-request-id'] = rng.pick(['', 'x'.repeat(2000), '../../', 'ÿ', '\t']);
  if (rng.chance(0.05)) headers.origin = rng.pick(['null', 'https://evil.example', 'x'.repeat(1000)]);
  if (rng.chance(0.05)) headers.referer = rng.pick(['', 'not a url', `https://example.com/${'q'.repeat(9000)}`]);

  // Path parameters: a sample value, the caller's own ids, or something naughty.
  let path = op.path;
  const query = new URLSearchParams();
  for (const param of op.params) {
    let value: string;
    if (rng.chance(0.35)) value = rng.pick(NAUGHTY_SEGMENTS);
    else if (param.name === 'accountId') value = String(creds.tenant.account.id);
    else if (param.name === 'serviceId') value = String(creds.tenant.service.id);
    else if (param.name === 'userId') value = String(creds.userId);
    else if (/Id$/.test(param.name)) value = String(rng.pick([999_999_999, 2_147_483_648, 0]));
    else value = String(sample(param.schema, rng));
    if (param.in === 'path') {
      path = path.replace(`{${param.name}}`, param.in === 'path' && NAUGHTY_SEGMENTS.includes(value) ? value : encodeURIComponent(value));
    } else if (rng.chance(0.7)) {
      query.append(param.name, value.startsWith('%') ? decodeURIComponentSafe(value) : value);
    }
  }
  if (rng.chance(0.1)) query.append(rng.pick(['limit', 'before', 'after', 'x', 'limit']), rng.pick(['-5', 'a\u0000', '\ud800', '1e9', '']));
  const search = query.toString();
  if (search) path += `?${search}`;

  const init: Built['init'] = { method: op.method.toUpperCase(), headers };
  if (op.upload) {
    init.body = multipartBody(op.upload, rng);
    if (rng.chance(0.1)) headers['content-type'] = rng.pick(['multipart/form-data', 'application/json', 'multipart/form-data; boundary=']);
  } else if (op.body || (op.method !== 'get' && rng.chance(0.1))) {
    const body = sample(op.body, rng);
    const way = rng.int(12);
    headers['content-type'] = 'application/json';
    if (way <= 5) init.body = JSON.stringify(mutate(body, rng));
    else if (way === 6)
      init.body = rng.pick(['{', '{"a":', 'nul', '[1,]', '{"a":1}}', '\u0000', '"\ud800"', "{'a':1}", '{"__proto__":{"x":1}}', '1e999999']);
    else if (way === 7) {
      headers['content-type'] = rng.pick([
        'text/xml',
        'application/x-www-form-urlencoded',
        'text/plain',
        'application/json; charset=utf-7',
        'application/json; charset=latin1',
        'image/png',
        '*/*',
        'application/vnd.api+json',
      ]);
      init.body = JSON.stringify(body);
    } else if (way === 8) {
      headers['content-encoding'] = rng.pick(['gzip', 'deflate', 'br', 'compress', 'gzip, identity', 'x-unknown']);
      init.body = rng.chance(0.5) ? Buffer.from('definitely not compressed') : gzipSync(JSON.stringify(body)).subarray(0, 10);
    } else if (way === 9) init.body = deepArray(rng.pick([1000, 10_000, 100_000]));
    else if (way === 10)
      init.body = JSON.stringify({ ...(body as Json), userAdditionalInformation: JSON.parse(`{"a":${deepArray(3000)}}`) as unknown });
    else init.body = JSON.stringify({ ...(body as Json), message: 'x'.repeat(rng.pick([5001, 300_000])) });
  }
  return { path, init };
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function multipartBody(field: string, rng: Rng): FormData {
  const form = new FormData();
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const contents = [
    png,
    Buffer.concat([png, Buffer.alloc(rng.int(64), 0xff)]),
    Buffer.from('hello, plain text'),
    Buffer.from([0xff, 0xd8, 0xff]),
    Buffer.from('%PDF-1.'),
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
    Buffer.from('PK\u0003\u0004'),
    Buffer.alloc(0),
    Buffer.from(Array.from({ length: 200 }, () => rng.int(256))),
  ];
  const names = ['a.png', 'a.txt', 'a\u0000.txt', 'lone\ud800.txt', 'x'.repeat(3000), '../../etc/passwd', '', 'résumé.pdf', 'a.doc'];
  form.append(
    rng.chance(0.85) ? field : 'other',
    new Blob([rng.pick(contents)], { type: rng.pick(['image/png', 'text/plain', '', 'application/msword', 'x/\u00ff']) }),
    rng.pick(names),
  );
  if (rng.chance(0.1)) form.append(field, new Blob([png]), 'second.png');
  if (rng.chance(0.1)) form.append('text', `a\u0000b`);
  return form;
}

interface Tally {
  requests: number;
  byClass: Record<string, number>;
  failures: string[];
}

function record(tally: Tally, what: string, status: number, text: string, contentType: string): void {
  tally.requests += 1;
  const cls = `${Math.floor(status / 100)}xx`;
  tally.byClass[cls] = (tally.byClass[cls] ?? 0) + 1;
  if (status >= 500) {
    tally.failures.push(`${what} → ${status} ${text.slice(0, 300)}`);
    return;
  }
  if (status < 400) return;
  let code: unknown;
  try {
    const body = JSON.parse(text) as { status?: unknown; notifications?: Array<{ message?: unknown }> };
    if (body.status !== 'ERROR') throw new Error('not an error envelope');
    code = body.notifications?.[0]?.message;
  } catch {
    tally.failures.push(`${what} → ${status} not in the envelope (${contentType}): ${text.slice(0, 200)}`);
    return;
  }
  if (typeof code !== 'string' || !SNAKE_CASE.test(code)) tally.failures.push(`${what} → ${status} code ${JSON.stringify(code)}`);
}

async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

/** When a test of BUDGET_MS that starts now must stop waiting, to name what was not answered. */
function reportAt(): number {
  return Date.now() + BUDGET_MS - REPORT_MS;
}

/**
 * A fuzzed request as fetch() would send it (its headers and body), on the run's own connections.
 * Not fetch(): its pool keeps the connections earlier requests (the before hook's) left idle, and
 * this process runs the server too. When the process is busy for longer than the server's
 * keep-alive timeout (building the requests below, beside a CPU hog), a request goes out on such
 * a connection and the server's idle timer, due meanwhile, fires before the server reads it: the
 * connection is reset under the request (ECONNRESET, seen as "GET /healthz → fetch failed" on
 * the first requests). The run's agent opens its connections when the run starts and keeps every
 * one busy (as many connections as requests in flight), so none is idle long enough to race.
 */
async function send(
  url: URL,
  init: RequestInit,
  agent: http.Agent,
  until: number,
): Promise<{ status: number; text: string; contentType: string }> {
  const request = new Request(url, init);
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const signal = AbortSignal.timeout(Math.max(0, until - Date.now()));
  return new Promise((resolve, reject) => {
    const outgoing = http.request(url, { method: request.method, headers: Object.fromEntries(request.headers), agent, signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
          contentType: res.headers['content-type'] ?? '',
        }),
      );
      res.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** A request the fetch API cannot make (a declared length it never sends): straight on a socket. */
function rawRequest(port: number, text: string, until: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    const timer = setTimeout(
      () => {
        socket.destroy();
        resolve('TIMEOUT');
      },
      Math.max(0, until - Date.now()),
    );
    socket.on('data', (chunk) => {
      out += String(chunk);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

describe('fuzzing (seeded)', function () {
  // Thousands of requests: about 40 CPU seconds, many minutes beside a CPU hog and another test
  // file (the whole run shares this process with the server).
  this.timeout(BUDGET_MS);
  let creds: Credentials;

  before(async () => {
    const owner = await tenant();
    const widgets = Array.from({ length: 24 }, () => new Widget(owner.account));
    const registered = await Promise.all(widgets.map((w) => w.register()));
    for (const answer of registered) expect(answer.status, answer.text).to.equal(200);
    // A session of its own, not the suite's shared token: DELETE /adminApi/session is among the
    // operations and may end it.
    const login = await client(sharedServer().url).post<{ token: string }>('/adminApi/login', { json: TEST_ADMIN });
    expect(login.status, login.text).to.equal(200);
    creds = { widgets, tenant: owner, userId: registered[0]!.body.data.userId, operator: login.body.data.token };
  });

  after(async () => {
    await creds.tenant.receiver.close();
  });

  it('answers every mutated request of every operation below 500, in the envelope', async () => {
    const until = reportAt();
    const { url } = sharedServer();
    const doc = (await (await fetch(new URL('/openapi.json', url))).json()) as { paths: Record<string, Record<string, Json>> };
    const operations: Operation[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const content = (op.requestBody as { content?: Record<string, { schema?: Json }> } | undefined)?.content ?? {};
        const upload = content['multipart/form-data']?.schema?.properties as Json | undefined;
        operations.push({
          method,
          path,
          security: ((op.security ?? []) as Array<Record<string, unknown>>).flatMap((s) => Object.keys(s)),
          body: content['application/json']?.schema,
          upload: upload ? Object.keys(upload)[0] : undefined,
          params: (op.parameters ?? []) as Operation['params'],
        });
      }
    }
    expect(operations.length).to.be.greaterThan(50);

    const rng = prng(SEED);
    const jobs: Array<{ op: Operation; built: Built }> = [];
    for (const op of operations) {
      for (let i = 0; i < PER_OPERATION; i++) {
        const built = buildRequest(op, rng, creds);
        // Logins: refused by validation only, so the run never spends the login limits the
        // rest of the suite signs in under.
        if (op.path === '/adminApi/login' && typeof built.init.body === 'string' && /"password":"/.test(built.init.body)) {
          built.init.body = built.init.body.replace(/"password":"/, '"password":"\u0000');
        }
        jobs.push({ op, built });
      }
    }

    const tally: Tally = { requests: 0, byClass: {}, failures: [] };
    const started = Date.now();
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    try {
      await pool(jobs, CONCURRENCY, async ({ op, built }) => {
        const what = `${built.init.method} ${built.path.slice(0, 120)}`;
        try {
          const answer = await send(new URL(built.path, url), built.init, agent, until);
          record(tally, what, answer.status, answer.text, answer.contentType);
        } catch (err) {
          tally.requests += 1;
          tally.byClass.hang = (tally.byClass.hang ?? 0) + 1;
          tally.failures.push(
            `${what} (${op.path}) → no answer: ${(err as Error & { code?: string }).code ?? (err as Error).name} ${(err as Error).message}`,
          );
        }
      });
    } finally {
      agent.destroy();
    }

    // Declared lengths the body never matches: refused at once, not after the request timeout.
    const port = Number(new URL(url).port);
    const identification = `${creds.tenant.account.identification}:${creds.widgets[0]!.deviceId}`;
    for (const length of ['4294967296', '9007199254740993', '2147483648', '300000']) {
      for (const [path, type] of [
        ['/messages', 'application/json'],
        ['/media', 'multipart/form-data; boundary=x'],
        ['/adminApi/accounts', 'application/json'],
      ] as const) {
        const answer = await rawRequest(
          port,
          `POST ${path} HTTP/1.1\r\nHost: fuzz\r\nx-iris-identification: ${identification}\r\n${path.startsWith('/adminApi') ? `authorization: Bearer ${creds.operator}\r\n` : ''}Content-Type: ${type}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n{}`,
          until,
        );
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
        if (status === 0) {
          tally.requests += 1;
          tally.byClass.hang = (tally.byClass.hang ?? 0) + 1;
          tally.failures.push(`POST ${path} with Content-Length ${length} → ${answer.slice(0, 100) || 'no answer'}`);
        } else record(tally, `POST ${path} (Content-Length ${length})`, status, answer.slice(answer.indexOf('\r\n\r\n') + 4), '');
        if (status !== 0 && Number(length) > 1e6) expect(status, `Content-Length ${length} on ${path}`).to.equal(413);
      }
    }

    console.log(
      `      fuzz: ${tally.requests} requests over ${operations.length} operations in ${Date.now() - started} ms, by status: ${JSON.stringify(tally.byClass)}`,
    );
    expect(tally.failures, tally.failures.slice(0, 60).join('\n')).to.deep.equal([]);
    expect(tally.requests).to.be.at.least(5000);
  });

  it('acknowledges every fuzzed socket event below 500, callback-only emits included', async () => {
    const until = reportAt();
    const rng = prng(SEED + 1);
    // A device of its own: the HTTP run above spent its devices' write limits.
    const widget = new Widget(creds.tenant.account);
    expect((await widget.register()).status).to.equal(200);
    const socket = new WidgetSocket(widget);
    await socket.connected();
    const failures: string[] = [];
    const byStatus: Record<string, number> = {};
    const events = ['message', 'startTyping', 'stopTyping', 'chatOpened'];
    for (let i = 0; i < SOCKET_EVENTS; i++) {
      const event = rng.pick(events);
      const shape = rng.int(5);
      const args: unknown[] =
        shape === 0
          ? [] // callback only: Socket.IO hands the callback over as the first argument
          : shape === 1
            ? [garbage(rng)]
            : shape === 2
              ? [mutate({ message: `fuzz ${i}` }, rng)]
              : shape === 3
                ? [{ message: garbage(rng), media: garbage(rng), typeId: garbage(rng), referer: garbage(rng) }]
                : [garbage(rng), garbage(rng)];
      try {
        const answer = (await socket.socket.timeout(Math.max(0, until - Date.now())).emitWithAck(event, ...args)) as {
          status?: string;
          notifications?: Array<{ message?: string }>;
        };
        const code = answer.notifications?.[0]?.message;
        const key = answer.status === 'SUCCESS' ? 'success' : String(code);
        byStatus[key] = (byStatus[key] ?? 0) + 1;
        if (answer.status !== 'SUCCESS' && (typeof code !== 'string' || !SNAKE_CASE.test(code) || code === 'internal_error')) {
          failures.push(`${event}(${JSON.stringify(args).slice(0, 100)}) → ${JSON.stringify(answer).slice(0, 200)}`);
        }
      } catch (err) {
        failures.push(`${event}(${JSON.stringify(args).slice(0, 100)}) → no acknowledgement: ${(err as Error).message}`);
      }
      // Events the server does not know, and packets without acknowledgement: no harm done.
      if (i % 10 === 0) socket.socket.emit(rng.pick(['unknown', 'constructor', '__proto__', 'x'.repeat(1000)]), garbage(rng));
      if (i % 15 === 0) socket.socket.emit(rng.pick(events), garbage(rng));
    }
    expect(socket.socket.connected, 'the socket survived').to.equal(true);
    socket.close();

    // Handshakes with garbage credentials: refused with a code, never internal_error.
    const url = sharedServer().url;
    for (let i = 0; i < 20; i++) {
      const auth = {
        identification: rng.pick([garbage(rng), `${creds.tenant.account.identification}:${'d'.repeat(12)}\u0000`, 'a:b']),
        authorization: rng.pick([garbage(rng), 'Zm9v', Buffer.from('a|b|1|c').toString('base64')]),
        lastMessageId: garbage(rng),
      };
      const client = io(url, { path: '/socket.io', transports: ['websocket'], reconnection: false, auth });
      const outcome = await new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve('timeout'), Math.max(0, until - Date.now()));
        client.once('connect', () => (clearTimeout(timer), resolve('connected')));
        client.once('connect_error', (err: Error) => (clearTimeout(timer), resolve(err.message)));
      });
      client.disconnect();
      byStatus[`handshake:${outcome}`] = (byStatus[`handshake:${outcome}`] ?? 0) + 1;
      if (outcome === 'timeout' || outcome === 'internal_error' || (outcome !== 'connected' && !SNAKE_CASE.test(outcome)))
        failures.push(`handshake ${JSON.stringify(auth).slice(0, 120)} → ${outcome}`);
    }
    console.log(`      fuzz: ${SOCKET_EVENTS} socket events and 20 handshakes, answers: ${JSON.stringify(byStatus)}`);
    expect(failures, failures.slice(0, 20).join('\n')).to.deep.equal([]);
  });

  it('is still healthy afterwards', async () => {
    const { url } = sharedServer();
    const ready = await fetch(new URL('/readyz', url));
    expect(ready.status).to.equal(200);
    const widget = new Widget(creds.tenant.account);
    expect((await widget.register()).status).to.equal(200);
    const sent = await widget.send('still here');
    expect(sent.status, sent.text).to.be.oneOf([200, 201]);
  });
});

describe('error logs', () => {
  it('carry a database error as its code, routine and constraint, never its statement or values', () => {
    const pgError = Object.assign(new Error(`invalid byte sequence for encoding "UTF8": 0x00`), {
      code: '22021',
      routine: 'report_invalid_encoding',
      severity: 'ERROR',
      detail: 'Key (text)=(secret customer text) already exists',
    });
    const wrapped = new DriverException(
      Object.assign(pgError, { message: `insert into "message" ("text") values ('secret customer text') - ${pgError.message}` }),
    );
    for (const err of [wrapped, pgError, new AppError(500, 'could_not_save', [], null, {}, wrapped)]) {
      const logged = JSON.stringify(serializeError(err));
      expect(logged).not.to.contain('secret');
      expect(logged).to.contain('22021');
    }
  });
});
