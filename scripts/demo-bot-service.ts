// A small Service for trying Palaver: it receives webhooks (checking their Standard Webhooks
// signature, as every Service should) and answers each user message through the Service API.
// Started after a visitor wrote, it asks at once for the deliveries that wait for it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface DemoBotOptions {
  /** Palaver's base URL, for the Service API. */
  palaverUrl: string;
  apiKey: string;
  signingSecret: string;
  port: number;
  log?: (line: string) => void;
}

interface MessagePayload {
  type: 'message';
  typeId: number;
  message: string;
  user: { id: string };
}

function isUserMessage(payload: unknown): payload is MessagePayload {
  const p = payload as Partial<MessagePayload> | null;
  return p?.type === 'message' && p.typeId === 1 && typeof p.message === 'string' && typeof p.user?.id === 'string';
}

/** What the bot says: an upload arrives as `{{img/<path>}}` whatever it holds, so its name tells a picture from a PDF. */
export function replyTo(message: string): string {
  if (!message.startsWith('{{img/')) return `You said: “${message}”`;
  return /\.(png|jpe?g|gif)\}\}$/i.test(message) ? 'Nice picture!' : 'Thanks, I got your file.';
}

export async function startDemoBot(options: DemoBotOptions): Promise<{ url: string; server: Server; retried: number | null }> {
  const verifier = new Webhook(options.signingSecret);
  const log = options.log ?? (() => undefined);

  const answer = async (payload: MessagePayload) => {
    const reply = replyTo(payload.message);
    const response = await fetch(new URL(`/users/${payload.user.id}/messages`, options.palaverUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: reply, agent: { id: 1, name: 'Demo bot' } }),
    });
    log(`answered user ${payload.user.id}: HTTP ${response.status}`);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let payload: unknown;
      try {
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        payload = verifier.verify(body, headers);
      } catch {
        log('refused a request with a bad signature');
        res.writeHead(401).end();
        return;
      }
      // Acknowledge at once; answering is a call of our own.
      res.writeHead(204).end();
      if (isUserMessage(payload)) answer(payload).catch((err: unknown) => log(`answer failed: ${String(err)}`));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port, '127.0.0.1', resolve));
  const retried = await sendWaitingNow(options, log);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, retried };
}

/**
 * What was written before the bot was up failed its first attempts and waits for a later one
 * (minutes away, on the production schedule): now that the bot listens, it asks for them at once.
 * Null when Palaver could not be asked (not running yet: its next attempts will find the bot).
 */
async function sendWaitingNow(options: DemoBotOptions, log: (line: string) => void): Promise<number | null> {
  try {
    const response = await fetch(new URL('/serviceApi/v2.3/deliveries/retry', options.palaverUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${options.apiKey}` },
    });
    if (!response.ok) {
      log(`could not ask for the waiting deliveries: HTTP ${response.status}`);
      return null;
    }
    const retried = ((await response.json()) as { data: { retried: number } }).data.retried;
    if (retried > 0) log(`asked for ${retried} waiting ${retried === 1 ? 'delivery' : 'deliveries'} now`);
    return retried;
  } catch (err) {
    log(`could not reach Palaver at ${options.palaverUrl} (${String(err)}); its next attempts will find the bot`);
    return null;
  }
}
