// The capacity benchmark's Service, in a process of its own (as a real bot would be): it takes
// every message webhook and answers it at once through the Service API, as an agent. Told where
// Palaver is and its API key with POST /configure; prints its port when ready.
// Told of several nodes (`palaverUrls`, the `nodes` benchmark), it answers a message whose text
// starts `n<k>.` (its customer's socket is on node k) through node k + 1, so that every answer
// is written on one node and reaches its socket on another.
// GET /trace gives, and forgets, when each message's webhook arrived and when the server answered
// its API call (ms on the clock `performance.timeOrigin + performance.now()`, which every process
// of the machine shares), and this process's CPU so far: capacity.ts breaks a round trip into
// stages with them, and tells whether this process, rather than the server, was short of a core.
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * At most 64 connections to each node, kept alive, as a bot's HTTP client pools them (Palaver's
 * own webhooks to a Service: `webhooks.maxPerService`, 64). Unbounded, as fetch() opens them, a
 * slow step had the Service open more than the 256 connections a node takes from one address
 * (`http.maxConnectionsPerAddress`), and the node refused the rest: answers lost to the bench's
 * Service, not to Palaver.
 *
 * With a `timeout`, node's agent also drops an idle connection a second before the server's
 * announced keep-alive timeout (`Keep-Alive: timeout=5`, Palaver's `http.keepAliveTimeoutMs`);
 * without one it ignores the announcement and keeps idle connections for ever, and may reuse one
 * just as the node closes it: that answer fails with ECONNRESET, a race of the bench's own client
 * counted as an unanswered message.
 */
const CONNECTIONS = 64;
const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS, timeout: 60_000 });

/**
 * API calls waiting for one of the connections, oldest first, in a queue of this process's own.
 * Node's agent queues what it cannot send in an array and takes from its front with shift(),
 * which copies the whole array once it is too large to be trimmed in place. Past a node's
 * throughput, with some 20,000 answers waiting, this Service ran at 170–190% of a core, 43% of
 * it in the agent's socket-free handler and 22% in collecting the garbage, and answered slower
 * than the node took them: the bench's limit, not Palaver's (docs/performance.md, Overload).
 */
const waiting: Array<() => void> = [];
let head = 0;
let calling = 0;

function whenConnectionFree(call: () => void): void {
  if (calling < CONNECTIONS) {
    calling += 1;
    call();
  } else {
    waiting.push(call);
  }
}

function connectionFreed(): void {
  const next = waiting[head];
  if (next === undefined) {
    calling -= 1;
    return;
  }
  waiting[head] = undefined as unknown as () => void;
  head += 1;
  // Dropped from the front in one copy once half the array is taken: constant work a call.
  if (head > 1024 && head * 2 > waiting.length) {
    waiting.splice(0, head);
    head = 0;
  }
  next();
}
let palaverUrls: string[] = [];
let apiKey = '';
let failures = 0;
/** Failed calls by what they got: an HTTP status with the envelope's error code, or the socket's error code. */
const failureKinds: Record<string, number> = {};
const failed = (kind: string) => {
  failures += 1;
  failureKinds[kind] = (failureKinds[kind] ?? 0) + 1;
};
/** Message text → [webhook in, API call answered]. */
let trace = new Map<string, [number, number]>();
const now = () => performance.timeOrigin + performance.now();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const hookAt = now();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    if (req.url === '/configure') {
      palaverUrls = Array.isArray(body.palaverUrls) ? body.palaverUrls.map(String) : [String(body.palaverUrl)];
      apiKey = String(body.apiKey);
      return res.writeHead(200).end('{}');
    }
    if (req.url === '/failures') return res.writeHead(200).end(JSON.stringify({ failures, kinds: failureKinds }));
    if (req.url === '/trace') {
      const cpu = process.cpuUsage();
      res.writeHead(200).end(JSON.stringify({ cpuSeconds: (cpu.user + cpu.system) / 1e6, messages: Object.fromEntries(trace) }));
      trace = new Map();
      return;
    }
    res.writeHead(200).end('{}');
    const user = body.user as { id?: string } | undefined;
    if (body.type !== 'message' || body.typeId !== 1 || !user?.id) return;
    const text = String(body.message);
    const customerNode = Number(/^n(\d+)\./.exec(text)?.[1] ?? 0);
    const palaverUrl = palaverUrls[(customerNode + 1) % palaverUrls.length];
    whenConnectionFree(() => {
      let freed = false;
      const free = () => {
        if (freed) return;
        freed = true;
        connectionFreed();
      };
      const call = request(
        `${palaverUrl}/serviceApi/v2.3/users/${user.id}/messages`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` } },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            trace.set(text, [hookAt, now()]);
            free();
            const status = answer.statusCode ?? 0;
            if (status >= 300) failed(`${status} ${/"code":"([^"]+)"/.exec(Buffer.concat(body).toString('utf8'))?.[1] ?? ''}`.trim());
          });
        },
      );
      call.on('error', (err: NodeJS.ErrnoException) => {
        free();
        failed(err.code ?? err.message);
      });
      call.end(JSON.stringify({ message: `re: ${text}`, agent: { id: 1, name: 'Capacity bot' } }));
    });
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
