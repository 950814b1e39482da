// The webhook receiver for benchmarks, in a process of its own so that it does not share an
// event loop with what is measured (nor with the load generator). Answers 200 to every POST at
// once and prints its port. For e2e_latency it notes when each "e2e N" message arrives, on
// the monotonic clock the benchmark process reads too (process.hrtime is CLOCK_MONOTONIC,
// one clock for the whole machine): GET /arrivals answers them, DELETE /arrivals forgets them.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const arrivals = new Map<number, string>();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const at = process.hrtime.bigint();
    if (req.url === '/arrivals') {
      if (req.method === 'DELETE') arrivals.clear();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.method === 'DELETE' ? '{}' : JSON.stringify(Object.fromEntries(arrivals)));
      return;
    }
    const match = /"message":"e2e (\d+)"/.exec(Buffer.concat(chunks).toString('utf8'));
    if (match?.[1]) arrivals.set(Number(match[1]), String(at));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
