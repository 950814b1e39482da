// `npm run demo-bot`: the demo Service (see demo-bot-service.ts), configured by environment:
//   PALAVER_URL (default http://127.0.0.1:3000), PALAVER_API_KEY, PALAVER_SIGNING_SECRET,
//   BOT_PORT (default 4000). Without the two secrets, it uses the demo Service that the first
//   start made (its credentials are in <PALAVER_DATA_DIR>/demo-bot.json, its webhook URL is
//   http://127.0.0.1:4000/). For another Service, point its webhook URL at the bot.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEMO_BOT_FILE } from '../src/setup/bootstrap.ts';
import { startDemoBot } from './demo-bot-service.ts';

function demoCredentials(): { apiKey?: string; signingSecret?: string } {
  const file = path.resolve(process.env.PALAVER_DATA_DIR ?? './data', DEMO_BOT_FILE);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { apiKey?: string; signingSecret?: string };
  } catch {
    return {};
  }
}

const saved = demoCredentials();
const apiKey = process.env.PALAVER_API_KEY || saved.apiKey;
const signingSecret = process.env.PALAVER_SIGNING_SECRET || saved.signingSecret;
if (!apiKey || !signingSecret) {
  process.stderr.write(
    'Set PALAVER_API_KEY and PALAVER_SIGNING_SECRET (from service:create), or start Palaver once with the demo setup.\n',
  );
  process.exit(2);
}
const bot = await startDemoBot({
  palaverUrl: process.env.PALAVER_URL ?? 'http://127.0.0.1:3000',
  apiKey,
  signingSecret,
  port: Number(process.env.BOT_PORT ?? 4000),
  log: (line) => process.stdout.write(`${line}\n`),
});
process.stdout.write(`demo bot listening on ${bot.url}\n`);
