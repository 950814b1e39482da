// What a start does to the data before serving: the configured operator, and on the very
// first start with nothing configured, a demo account so that `npm start` is useful at once
// (shown at every start until its operator signs in).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { AccountSchema } from '../db/entities/index.ts';
import { createAccount } from '../tenancy/accounts.ts';
import { createOperator, ensureOperator } from '../tenancy/operators.ts';
import { createService } from '../tenancy/services.ts';
import type { Logger } from '../logger.ts';

export interface DemoSetup {
  operatorEmail: string;
  operatorPassword: string;
  accountId: number;
  accountIdentification: string;
  serviceIdentification: string;
  apiKey: string;
  signingSecret: string;
}

/** Where the demo bot is expected: the demo Service's webhook URL (`npm run demo-bot` listens there). */
export const DEMO_BOT_URL = 'http://127.0.0.1:4000/';

/** The demo Service's credentials, kept for `npm run demo-bot` beside the embedded database. */
export const DEMO_BOT_FILE = 'demo-bot.json';

/** The demo's banner, shown at every start until its operator signs in (then removed). */
export const DEMO_LOGIN_FILE = 'demo-login.json';

export async function bootstrap(em: EntityManager, config: Config, logger: Logger): Promise<DemoSetup | null> {
  const { email, password } = config.admin;
  if (email && password) {
    const { created } = await ensureOperator(em, {
      email,
      password,
      grants: [{ accountId: null, permission: '*' }],
      hashCost: config.security.passwordHashCost,
    });
    if (created) logger.info({ email }, 'operator created from PALAVER_ADMIN_EMAIL');
    return null;
  }
  if (!config.demo) return null;
  if ((await em.count(AccountSchema, {})) > 0) return keptDemo(config.dataDir);
  const demo = await createDemo(em, config.security.passwordHashCost);
  // Only in the data directory (mode 0600): the demo's own Service, what lets the bot start
  // with `npm run demo-bot` and no copying of secrets; and the banner, until it has been used.
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(
    path.join(config.dataDir, DEMO_BOT_FILE),
    `${JSON.stringify({ apiKey: demo.apiKey, signingSecret: demo.signingSecret }, null, 2)}\n`,
    { mode: 0o600 },
  );
  writeFileSync(path.join(config.dataDir, DEMO_LOGIN_FILE), `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  return demo;
}

/**
 * The demo as the start that made it showed it, while its operator has not signed in: a
 * password printed once is lost for good to a terminal closed too soon or a start that failed.
 */
function keptDemo(dataDir: string): DemoSetup | null {
  try {
    return JSON.parse(readFileSync(path.join(dataDir, DEMO_LOGIN_FILE), 'utf8')) as DemoSetup;
  } catch {
    return null;
  }
}

/** The demo operator has signed in: its password is known, and no longer kept in the data directory. */
export function forgetDemoLogin(dataDir: string, email: string): void {
  if (keptDemo(dataDir)?.operatorEmail !== email) return;
  rmSync(path.join(dataDir, DEMO_LOGIN_FILE), { force: true });
}

async function createDemo(em: EntityManager, hashCost: number): Promise<DemoSetup> {
  const operatorEmail = 'admin@palaver.local';
  const operatorPassword = randomBytes(12).toString('base64url');
  await createOperator(em, {
    email: operatorEmail,
    password: operatorPassword,
    grants: [{ accountId: null, permission: '*' }],
    hashCost,
  });
  const account = await createAccount(em, { name: 'Demo' });
  const created = await createService(em, account.id, { name: 'Demo Service', webhookUrl: DEMO_BOT_URL });
  if (!created) throw new Error('demo account vanished while being set up');
  return {
    operatorEmail,
    operatorPassword,
    accountId: account.id,
    accountIdentification: account.identification,
    serviceIdentification: created.service.identification,
    apiKey: created.apiKey,
    signingSecret: created.service.signingSecret,
  };
}

/**
 * Printed by every start until the demo operator signs in once; meanwhile it is kept in the
 * data directory, readable by its owner only (DEMO_LOGIN_FILE), and nowhere else in plain.
 */
export function demoBanner(demo: DemoSetup, baseUrl: string, dataDir: string): string {
  return [
    '',
    '  Palaver is running with a demo account (keep what you need: this is shown at every start',
    `  until you sign in as ${demo.operatorEmail}, kept meanwhile in ${path.join(dataDir, DEMO_LOGIN_FILE)}):`,
    '',
    `    Admin API   ${baseUrl}/adminApi   operator ${demo.operatorEmail} / ${demo.operatorPassword}`,
    `    Account     id ${demo.accountId}, identification ${demo.accountIdentification}`,
    `    Service     identification ${demo.serviceIdentification}, API key ${demo.apiKey}`,
    `                webhook ${DEMO_BOT_URL} (run \`npm run demo-bot\` to answer there)`,
    `    Dashboard   ${baseUrl}/dashboard`,
    `    Chat demo   ${baseUrl}/`,
    '',
    '  Try it:',
    `    curl -s -X POST ${baseUrl}/adminApi/login -H 'content-type: application/json' \\`,
    `      -d '{"email":"${demo.operatorEmail}","password":"${demo.operatorPassword}"}'`,
    `    curl -s ${baseUrl}/adminApi/accounts/${demo.accountId} -H 'authorization: Bearer <token from login>'`,
    '',
  ].join('\n');
}
