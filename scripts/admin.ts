// `npm run admin -- <command> [options]`: scripted setup on the configured database, with
// the same validation, domain code and answer shapes as the Admin API. Prints JSON on stdout.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ForeignKeyConstraintViolationException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { loadConfig } from '../src/config.ts';
import { migrate, openDatabase } from '../src/db/orm.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createAccount, findAccountOverview } from '../src/domain/accounts.ts';
import { createOperator } from '../src/domain/operators.ts';
import { isPermission, type Grant } from '../src/domain/permissions.ts';
import { createService } from '../src/domain/services.ts';
import { createLogger } from '../src/logger.ts';
import { presentAccount, presentAccountOverview } from '../src/presenters/account.ts';
import { presentCreatedService } from '../src/presenters/service.ts';
import { accountIdParams, createAccountBody, createServiceBody } from '../src/routes/admin/schema.ts';

const USAGE = `Usage: npm run admin -- <command> [options]

  account:create  --name NAME
  account:show    --account ID
  service:create  --account ID --name NAME [--webhook-url URL]
  operator:create --email EMAIL --password PASSWORD [--grant PERMISSION[@ACCOUNT_ID]]...
                  (no --grant: every permission on every account)

Uses DATABASE_URL, or the embedded database under PALAVER_DATA_DIR (stop the server first:
the embedded database opens in one process at a time).`;

class UsageError extends Error {}

const operatorInput = z.object({
  email: z.string().email(),
  password: z.string().min(8, 'must be at least 8 characters'),
});

/** Schema field → the command-line flag that fills it, so problems name what the user typed. */
const FLAGS: Record<string, string> = { webhookUrl: 'webhook-url', accountId: 'account' };

function valid<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    return `--${FLAGS[field] ?? field}: ${issue.message}`;
  });
  throw new UsageError(problems.join('\n'));
}

function parseGrant(text: string): Grant {
  const [permission = '', account] = text.split('@');
  if (!isPermission(permission)) throw new UsageError(`unknown permission: ${permission}`);
  const accountId = account === undefined ? null : Number(account);
  if (accountId !== null && !(Number.isInteger(accountId) && accountId > 0)) {
    throw new UsageError(`bad account id in grant: ${text}`);
  }
  return { permission, accountId };
}

type Values = { [key: string]: string | string[] | undefined };
type Command = (em: EntityManager, values: Values) => Promise<unknown>;

const commands: Record<string, Command> = {
  'account:create': async (em, values) =>
    presentAccount(await createAccount(em, valid(createAccountBody, { name: values.name }))),

  'account:show': async (em, values) => {
    const { accountId } = valid(accountIdParams, { accountId: values.account });
    const overview = await findAccountOverview(em, accountId);
    if (!overview) throw new UsageError(`account ${accountId} not found`);
    return presentAccountOverview(overview.account, overview.services);
  },

  'service:create': async (em, values) => {
    const { accountId, ...body } = valid(accountIdParams.extend(createServiceBody.shape), {
      accountId: values.account,
      name: values.name,
      webhookUrl: values['webhook-url'],
    });
    const created = await createService(em, accountId, body);
    if (!created) throw new UsageError(`account ${accountId} not found`);
    const defaultServiceId = created.isDefault ? created.service.id : null;
    return presentCreatedService(created.service, defaultServiceId, created.apiKey);
  },

  'operator:create': async (em, values) => {
    const input = valid(operatorInput, { email: values.email, password: values.password });
    const grantTexts = Array.isArray(values.grant) ? values.grant : [];
    const grants = grantTexts.length > 0 ? grantTexts.map(parseGrant) : [{ accountId: null, permission: '*' as const }];
    const operator = await createOperator(em, { ...input, grants }).catch((err: unknown) => {
      if (err instanceof UniqueConstraintViolationException) throw new UsageError('an operator with that email exists');
      if (err instanceof ForeignKeyConstraintViolationException) throw new UsageError('a granted account does not exist');
      throw err;
    });
    return { id: operator.id, email: operator.email, identifier: operator.identifier, grants };
  },
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  if (!command) {
    process.stderr.write(`${USAGE}\n`);
    return name && name !== '--help' ? 2 : 0;
  }
  let values: Values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        account: { type: 'string' },
        'webhook-url': { type: 'string' },
        email: { type: 'string' },
        password: { type: 'string' },
        grant: { type: 'string', multiple: true },
      },
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }

  const config = loadConfig();
  const logger = createLogger({ logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel }, 2);
  const db = await openDatabase(config, logger);
  try {
    await migrate(db, logger);
    const result = await command(db.orm.em.fork(), values);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 2;
  } finally {
    await db.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
