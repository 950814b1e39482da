// `npm run demo-bot`: the demo Service (see demo-bot-service.ts), configured by environment:
//   PALAVER_URL (default http://127.0.0.1:3000), PALAVER_API_KEY, PALAVER_SIGNING_SECRET,
//   BOT_PORT (default 4000). Point the Service's webhook URL at http://127.0.0.1:4000/.
import { startDemoBot } from './demo-bot-service.ts';

const apiKey = process.env.PALAVER_API_KEY;
const signingSecret = process.env.PALAVER_SIGNING_SECRET;
if (!apiKey || !signingSecret) {
  process.stderr.write('Set PALAVER_API_KEY and PALAVER_SIGNING_SECRET (from service:create).\n');
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
