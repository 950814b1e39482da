// `npm run admin -- <command> [options]`: scripted setup on the configured database, with
// the same validation, domain code and answer shapes as the Admin API. Prints JSON on stdout.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { loadConfig, type Config } from '../src/config.ts';
import { DataDirInUseError } from '../src/db/data-dir-lock.ts';
import { migrate, openDatabase } from '../src/db/orm.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createAccount, findAccountOverview } from '../src/tenancy/accounts.ts';
import { createOperator, normalizeEmail } from '../src/tenancy/operators.ts';
import { createPasswordReset, passwordResetUrl } from '../src/tenancy/password-resets.ts';
import { removeTwoFactor } from '../src/tenancy/two-factor.ts';
import { newPassword } from '../src/security/password-policy.ts';
import { isPermission, type Grant } from '../src/tenancy/permissions.ts';
import {
  createService,
  findService,
  issueApiKey,
  listApiKeys,
  revokeApiKey,
  rotateSigningSecret,
  updateService,
} from '../src/tenancy/services.ts';
import { changeDefaultService } from '../src/tenancy/default-service.ts';
import { AccountSchema, OperatorSchema } from '../src/db/entities/index.ts';
import { knownError } from '../src/errors.ts';
import { audited } from '../src/audit/entries.ts';
import { CLI_CONTEXT, type AuditRequest } from '../src/audit/context.ts';
import { eachAudit } from '../src/audit/log.ts';
import { presentAuditEntry } from '../src/presenters/audit.ts';
import { presentApiKey } from '../src/presenters/api-key.ts';
import { createLogger } from '../src/logger.ts';
import { presentAccountOverview, presentCreatedAccount } from '../src/presenters/account.ts';
import { presentCreatedService, presentService } from '../src/presenters/service.ts';
import { accountIdParams, createAccountBody, createServiceBody, defaultServiceBody, updateServiceBody } from '../src/api/admin/schema.ts';

const USAGE = `Usage: npm run admin -- <command> [options]

  account:create  --name NAME
  account:show    --account ID
  service:create  --account ID --name NAME [--webhook-url URL]
  service:update  --service ID [--name NAME] [--webhook-url URL] [--enable | --disable]
                  [--standby none|all|participated] [--webhook-kinds messages,events,actions]
                  [--handover-next SERVICE_IDENTIFICATION|none]
  default-service:set --account ID --identification SERVICE_IDENTIFICATION
  key:list        --service ID   (the keys' ids, prefixes and creation times)
  key:create      --service ID
  key:revoke      --service ID --key KEY_ID
  secret:rotate   --service ID
  operator:create --email EMAIL --password PASSWORD [--grant PERMISSION[@ACCOUNT_ID]]...
                  (no --grant: every permission on every account)
  operator:reset-password --email EMAIL
                  (a one-time link that sets a new password, printed once; no email is sent.
                  Links start with PALAVER_PUBLIC_URL, or http://localhost:<port>)
  operator:two-factor-off --email EMAIL
                  (for an operator who lost their authenticator and recovery codes: two-factor
                  sign-in off, their sessions ended)
  audit:export    [--account ID] [--operator ID] [--action ACTION] [--since ISO] [--until ISO]
                  (the audit log as JSON lines, newest first, on standard output)

Every change above is recorded in the audit log with the actor "cli".

Uses DATABASE_URL, or the embedded database under PALAVER_DATA_DIR (stop the server first:
the embedded database opens in one process at a time).`;

class UsageError extends Error {}

const operatorInput = z.object({
  email: z.string().email(),
  password: newPassword,
});

const operatorEmail = z.object({ email: z.string().email() });

/** Schema field → the command-line flag that fills it, so problems name what the user typed. */
const FLAGS: Record<string, string> = {
  webhookUrl: 'webhook-url',
  accountId: 'account',
  serviceId: 'service',
  keyId: 'key',
  webhookKinds: 'webhook-kinds',
  handoverNext: 'handover-next',
};

const serviceFlag = z.object({ serviceId: z.coerce.number().int().positive() });

async function existingService(em: EntityManager, values: Values) {
  const { serviceId } = valid(serviceFlag, { serviceId: values.service });
  const service = await findService(em, serviceId);
  if (!service) throw new UsageError(`service ${serviceId} not found`);
  const account = await em.findOneOrFail(AccountSchema, { id: service.accountId });
  return { service, account };
}

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

type Values = { [key: string]: string | boolean | string[] | undefined };
type Command = (em: EntityManager, values: Values, config: Config, audit: AuditRequest) => Promise<unknown>;

/** The audit action of each command that changes something (actor "cli"); the others read. */
const AUDIT_ACTIONS: Record<string, string> = {
  'account:create': 'account.create',
  'service:create': 'service.create',
  'service:update': 'service.update',
  'default-service:set': 'account.set_default_service',
  'key:create': 'service.create_key',
  'key:revoke': 'service.revoke_key',
  'secret:rotate': 'service.rotate_signing_secret',
  'operator:create': 'operator.create',
  'operator:reset-password': 'password_reset.create',
  'operator:two-factor-off': 'two_factor.remove',
};

/** The options that name records (target ids) and the ones that are changed fields; a password is never named as a value. */
const TARGET_OPTIONS = ['account', 'service', 'key'];
/**
 * Commands whose tenancy function records the audit entry itself, in the transaction that also
 * tells other nodes of the change (db/tx/run.ts refuses a transaction inside another).
 */
const SELF_AUDITED = new Set(['service:create', 'service:update', 'default-service:set', 'key:revoke', 'operator:reset-password']);

const auditDetails = (values: Values) => ({
  target: Object.fromEntries(TARGET_OPTIONS.flatMap((o) => (typeof values[o] === 'string' ? [[o, values[o]]] : []))),
  changed: Object.keys(values).filter((o) => !TARGET_OPTIONS.includes(o)),
});

const commands: Record<string, Command> = {
  'account:create': async (em, values) => presentCreatedAccount(await createAccount(em, valid(createAccountBody, { name: values.name }))),

  'account:show': async (em, values) => {
    const { accountId } = valid(accountIdParams, { accountId: values.account });
    const overview = await findAccountOverview(em, accountId);
    if (!overview) throw new UsageError(`account ${accountId} not found`);
    return presentAccountOverview(overview.account, overview.services, overview.inbox);
  },

  'service:create': async (em, values, _config, audit) => {
    const { accountId, ...body } = valid(accountIdParams.extend(createServiceBody.shape), {
      accountId: values.account,
      name: values.name,
      webhookUrl: values['webhook-url'],
    });
    const created = await createService(em, accountId, body, { ...audit, changed: auditDetails(values).changed });
    if (!created) throw new UsageError(`account ${accountId} not found`);
    const defaultServiceId = created.isDefault ? created.service.id : null;
    return presentCreatedService(created.service, defaultServiceId, created.apiKey);
  },

  'service:update': async (em, values, _config, audit) => {
    const { service } = await existingService(em, values);
    const enabled = values.enable ? true : values.disable ? false : undefined;
    const changes = valid(updateServiceBody, {
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values['webhook-url'] !== undefined ? { webhookUrl: values['webhook-url'] } : {}),
      ...(enabled !== undefined ? { enabled } : {}),
      ...(values.standby !== undefined ? { standby: values.standby } : {}),
      // A comma-separated list: messages,events,actions.
      ...(values['webhook-kinds'] !== undefined ? { webhookKinds: String(values['webhook-kinds']).split(',').filter(Boolean) } : {}),
      // "none" clears it.
      ...(values['handover-next'] !== undefined
        ? { handoverNext: values['handover-next'] === 'none' ? null : values['handover-next'] }
        : {}),
    });
    const updated = await updateService(em, service.id, changes, { ...audit, changed: Object.keys(changes) });
    const account = await em.findOneOrFail(AccountSchema, { id: service.accountId });
    return updated && presentService(updated, account.defaultServiceId ?? null);
  },

  'default-service:set': async (em, values, _config, audit) => {
    const { accountId } = valid(accountIdParams, { accountId: values.account });
    const { serviceIdentification } = valid(defaultServiceBody, { serviceIdentification: values.identification });
    // Announced like an operator's change; "cli" stands where an operator's identifier would.
    const { changed } = await changeDefaultService(em, { accountId, serviceIdentification, operatorIdentifier: 'cli' }, audit);
    return { accountId, defaultService: serviceIdentification, changed };
  },

  // The ids key:revoke takes, told apart by their prefixes (the start of the key).
  'key:list': async (em, values) => {
    const { service } = await existingService(em, values);
    return (await listApiKeys(em, service.id)).map(presentApiKey);
  },

  'key:create': async (em, values) => {
    const { service } = await existingService(em, values);
    const { apiKey, key } = issueApiKey(em, service.id);
    await em.flush();
    return { ...presentApiKey(key), apiKey };
  },

  'key:revoke': async (em, values, _config, audit) => {
    const { service } = await existingService(em, values);
    const { keyId } = valid(z.object({ keyId: z.coerce.number().int().positive() }), { keyId: values.key });
    const key = await revokeApiKey(em, service.id, keyId, audit);
    if (!key) throw new UsageError(`key ${keyId} not found on service ${service.id}`);
    return presentApiKey(key);
  },

  'secret:rotate': async (em, values, config) => {
    const { service } = await existingService(em, values);
    const rotated = await rotateSigningSecret(em, service, config.webhooks.secretGraceSeconds);
    return { signingSecret: rotated.signingSecret, previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() ?? null };
  },

  'operator:create': async (em, values, config) => {
    const input = valid(operatorInput, { email: values.email, password: values.password });
    const grantTexts = Array.isArray(values.grant) ? values.grant : [];
    const grants = grantTexts.length > 0 ? grantTexts.map(parseGrant) : [{ accountId: null, permission: '*' as const }];
    const operator = await createOperator(em, { ...input, grants, hashCost: config.security.passwordHashCost });
    return { id: operator.id, email: operator.email, identifier: operator.identifier, grants };
  },

  'operator:reset-password': async (em, values, config, audit) => {
    const { email } = valid(operatorEmail, { email: values.email });
    const operator = await em.findOne(OperatorSchema, { email: normalizeEmail(email) });
    if (!operator) throw new UsageError(`no operator has the email ${email}`);
    const reset = await createPasswordReset(em, operator.id, config.admin.passwordResetTtlSeconds, audit);
    if (!reset) throw new UsageError(`no operator has the email ${email}`);
    const baseUrl = config.publicUrl ?? `http://localhost:${config.port || 3000}`;
    return { operator: operator.email, url: passwordResetUrl(baseUrl, reset.token), expiresAt: reset.expiresAt.toISOString() };
  },

  'operator:two-factor-off': async (em, values) => {
    const { email } = valid(operatorEmail, { email: values.email });
    const operator = await em.findOne(OperatorSchema, { email: normalizeEmail(email) });
    if (!operator || !(await removeTwoFactor(em, operator.id))) throw new UsageError(`no operator has the email ${email}`);
    return { operator: operator.email, twoFactorEnabled: false };
  },
};

const auditExportOptions = z.object({
  account: z.coerce.number().int().positive().optional(),
  operator: z.coerce.number().int().positive().optional(),
  action: z.string().min(1).max(100).optional(),
  since: z.coerce.date().optional(),
  until: z.coerce.date().optional(),
});

/** The audit log as JSON lines (the same lines as GET /adminApi/audit/export), newest first. */
async function exportAudit(em: EntityManager, values: Values): Promise<number> {
  const options = valid(auditExportOptions, values);
  const filter = {
    readable: null,
    accountId: options.account,
    operatorId: options.operator,
    action: options.action,
    since: options.since,
    until: options.until,
  };
  for await (const entry of eachAudit(em, filter)) process.stdout.write(`${JSON.stringify(presentAuditEntry(entry))}\n`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  if (!command && name !== 'audit:export') {
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
        service: { type: 'string' },
        key: { type: 'string' },
        identification: { type: 'string' },
        enable: { type: 'boolean' },
        disable: { type: 'boolean' },
        standby: { type: 'string' },
        'webhook-kinds': { type: 'string' },
        'handover-next': { type: 'string' },
        operator: { type: 'string' },
        action: { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
      },
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }

  const config = loadConfig();
  const logger = createLogger({ logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel, logFormat: config.logFormat }, 2);
  let db: Awaited<ReturnType<typeof openDatabase>>;
  try {
    db = await openDatabase(config, logger);
  } catch (err) {
    // A running server holds the embedded database: one line saying so, not a stack.
    if (!(err instanceof DataDirInUseError)) throw err;
    process.stderr.write(
      `error: the data directory ${err.dataDir} is in use by process ${err.pid}; stop the server first, or use the Admin API\n`,
    );
    return 2;
  }
  try {
    await migrate(db, logger);
    const em = db.orm.em.fork();
    if (!command) return await exportAudit(em, values);
    const action = name ? AUDIT_ACTIONS[name] : undefined;
    const audit: AuditRequest = { context: CLI_CONTEXT, action: action ?? '' };
    // A change and its audit entry in one transaction; the commands that notify other nodes (or
    // make a reset link) record their own entry in their own transaction (SELF_AUDITED).
    const result =
      action && !SELF_AUDITED.has(name ?? '')
        ? await audited(
            em,
            audit,
            (tx) => command(tx, values, config, audit),
            () => auditDetails(values),
          )
        : await command(em, values, config, audit);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    // The same errors, told apart the same way, as the Admin API answers (errors.ts).
    const known = knownError(err);
    if (!known) throw err;
    const fields = known.details.flatMap((d) => (d.field ? [`\n  ${d.field}: ${d.detail ?? d.message}`] : []));
    process.stderr.write(`error: ${known.code}${fields.join('')}\n`);
    return 2;
  } finally {
    await db.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
