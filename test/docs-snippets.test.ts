// The documents' examples run as written. Each document's ```sh test blocks are one bash script
// (set -euo pipefail; variables carry from block to block) against a Palaver started here, with
// `localhost:3000` pointed at it and the test operator in PALAVER_ADMIN_EMAIL / _PASSWORD.
// A ```js test block is a webhook receiver: it must listen on $PORT and verify with
// $PALAVER_SIGNING_SECRET; it is sent one signed payload (answered 2xx) and one forged (4xx).
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { failedBlock, markdownDocuments, repoRoot, run, shellScript, start, testedSnippets, type Snippet } from './support/snippets.ts';
import { startTestServer, TEST_ADMIN, type TestServer } from './support/server.ts';
import { tempDir } from './support/database.ts';

const documents = markdownDocuments().map((name) => ({
  name,
  snippets: testedSnippets(readFileSync(path.join(repoRoot, name), 'utf8')),
}));

function report(name: string, snippet: Snippet | undefined, output: string): string {
  const where = snippet ? `${name}, the block at line ${snippet.line}:\n${snippet.code}` : name;
  return `${where}\n--- output ---\n${output.trim()}`;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function listening(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end(() => resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listened on port ${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('documentation snippets', function () {
  this.timeout(120_000);
  let server: TestServer;
  let hostPort: string;

  before(async () => {
    // The documents show the default typing timeout (10 s); the test configuration's 300 ms
    // would end an agent's typing before the next line of an example reads it.
    server = await startTestServer({ client: { typingTimeoutMs: 10_000 } });
    hostPort = new URL(server.url).host;
  });

  after(async () => {
    await server?.stop();
  });

  it('finds tested snippets in the guides', () => {
    const tested = documents.filter((doc) => doc.snippets.some((s) => s.language === 'sh'));
    expect(tested.map((doc) => doc.name)).to.include.members(['docs/getting-started.md', 'docs/client-api.md', 'docs/service-api.md']);
  });

  for (const doc of documents) {
    const shell = doc.snippets.filter((s) => s.language === 'sh');
    if (shell.length > 0) {
      it(`${doc.name}: its sh test blocks run`, async () => {
        const script = shellScript(shell, (code) => code.replaceAll('localhost:3000', hostPort));
        const result = await run('bash', ['-euo', 'pipefail', '-c', script], {
          cwd: tempDir('snippets'),
          env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            PALAVER_ADMIN_EMAIL: TEST_ADMIN.email,
            PALAVER_ADMIN_PASSWORD: TEST_ADMIN.password,
          },
          timeoutMs: 90_000,
        });
        if (result.code !== 0) {
          const failed = failedBlock(shell, result.output);
          expect.fail(`exit code ${result.code} in ${report(doc.name, failed.snippet, failed.output)}`);
        }
      });
    }

    for (const snippet of doc.snippets.filter((s) => s.language === 'js')) {
      it(`${doc.name}: the js test block at line ${snippet.line} verifies a signed webhook and refuses a forged one`, async () => {
        const secret = `whsec_${Buffer.from('a signing secret of 32 bytes....').toString('base64')}`;
        const port = await freePort();
        const receiver = start(process.execPath, ['--input-type=module'], {
          input: snippet.code,
          cwd: repoRoot,
          env: { PATH: process.env.PATH, PORT: String(port), PALAVER_SIGNING_SECRET: secret },
          timeoutMs: 30_000,
        });
        try {
          await listening(port, 15_000);
          // A message payload as Palaver sends it (src/presenters/webhook-payloads.ts).
          const body = JSON.stringify({
            type: 'message',
            id: 1,
            time: 1795499700,
            message: 'Hi',
            typeId: 1,
            accountIdentification: 'docs',
            accountId: 1,
            user: { id: '1', uniqueIdentifier: null, additionalInformation: null },
          });
          const id = 'msg_2f1c1e0e-docs';
          const now = new Date();
          const headers = {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
            'webhook-signature': new Webhook(secret).sign(id, now, body),
          };
          const url = `http://127.0.0.1:${port}/`;
          const signed = await fetch(url, { method: 'POST', headers, body });
          expect(signed.status, 'a correctly signed payload').to.be.within(200, 299);
          const forged = await fetch(url, { method: 'POST', headers, body: body.replace('Hi', 'Ho') });
          expect(forged.status, 'a payload that does not match its signature').to.be.within(400, 499);
        } catch (err) {
          expect.fail(`${(err as Error).message}\n${report(doc.name, snippet, receiver.output())}`);
        } finally {
          receiver.child.kill('SIGTERM');
          await receiver.exited;
        }
      });
    }
  }
});
