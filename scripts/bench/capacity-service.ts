// The capacity benchmark's Service, in a process of its own (as a real bot would be): it takes
// every message webhook and answers it at once through the Service API, as an agent. Told where
// Palaver is and its API key with POST /configure; prints its port when ready.
// Told of several nodes (`palaverUrls`, the `nodes` benchmark), it answers a message whose text
// starts `n<k>.` (its customer's socket is on node k) through node k + 1, so that every answer
// is written on one node and reaches its socket on another.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let palaverUrls: string[] = [];
let apiKey = '';
let failures = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    if (req.url === '/configure') {
      palaverUrls = Array.isArray(body.palaverUrls) ? body.palaverUrls.map(String) : [String(body.palaverUrl)];
      apiKey = String(body.apiKey);
      return res.writeHead(200).end('{}');
    }
    if (req.url === '/failures') return res.writeHead(200).end(JSON.stringify({ failures }));
    res.writeHead(200).end('{}');
    const user = body.user as { id?: string } | undefined;
    if (body.type !== 'message' || body.typeId !== 1 || !user?.id) return;
    const customerNode = Number(/^n(\d+)\./.exec(String(body.message))?.[1] ?? 0);
    const palaverUrl = palaverUrls[(customerNode + 1) % palaverUrls.length];
    fetch(`${palaverUrl}/serviceApi/v2.3/users/${user.id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ message: `re: ${String(body.message)}`, agent: { id: 1, name: 'Capacity bot' } }),
    }).then(
      async (answer) => {
        await answer.arrayBuffer();
        if (!answer.ok) failures += 1;
      },
      () => {
        failures += 1;
      },
    );
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
