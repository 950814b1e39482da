// One typed configuration object, read once at start: config/default.json, then
// config/<NODE_ENV>.json, then environment variables, then programmatic overrides (tests).
// Any wrong value stops the start with a list naming every problem.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_HASH_COST } from './security/passwords.ts';
import { isAddressOrCidr } from './addresses.ts';
import { isPermission, type Permission } from './tenancy/permissions.ts';

const booleanLike = z.union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')]);

/** A rate limit: so many points per window (limits.ts). */
const rateLimit = z.object({
  points: z.coerce.number().int().positive(),
  durationSeconds: z.coerce.number().int().positive(),
});

const secondsList = z.union([
  z.array(z.number().nonnegative()),
  z
    .string()
    .transform((s) => s.split(',').map((part) => Number(part.trim())))
    .pipe(z.array(z.number().nonnegative().finite()).min(1)),
]);

/** Addresses and CIDR blocks, as a JSON list or a comma-separated string (PALAVER_TRUSTED_PROXIES). */
const addressList = z
  .union([
    z.array(z.string()),
    z.string().transform((s) =>
      s
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean),
    ),
  ])
  .pipe(z.array(z.string().refine(isAddressOrCidr, 'must be an IP address or a CIDR block (10.0.0.0/8)')));

/** A list as JSON or as a comma- or space-separated string (environment variables). */
const stringList = z.union([
  z.array(z.string()),
  z.string().transform((s) =>
    s
      .split(/[\s,]+/)
      .map((part) => part.trim())
      .filter(Boolean),
  ),
]);

/** `permission@accountId` or `permission@*` (every account), as the operators page writes grants. */
const grantText = z
  .string()
  .regex(/^[^@\s]+@(\*|[1-9]\d*)$/, 'must look like conversations:read@3 or *@* (a permission, @, an account id or *)')
  .refine((g) => isPermission(g.split('@')[0] ?? ''), 'names no permission (docs/operations.md lists them)')
  .transform((g) => {
    const [permission = '', account = '*'] = g.split('@');
    return { permission: permission as Permission | '*', accountId: account === '*' ? null : Number(account) };
  });

/** false (or "off"): nobody is created; a list (maybe empty): new operators get these grants. */
const createOperators = z.union([
  z.literal(false),
  z.enum(['off', 'false']).transform((): false => false),
  stringList.pipe(z.array(grantText)),
]);

const oidc = z.object({
  /** The provider's issuer URL; its /.well-known/openid-configuration is read at the first sign-in. */
  issuer: z
    .string()
    .url()
    .refine(
      (u) => u.startsWith('https://') || /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(:\d+)?(\/|$)/.test(u),
      'must be an https:// URL (http:// only for a provider on this machine)',
    ),
  clientId: z.string().min(1),
  clientSecret: z.string().min(16, 'must be at least 16 characters'),
  scopes: stringList
    .pipe(
      z
        .array(z.string().min(1))
        .refine((s) => s.includes('openid') && s.includes('email'), 'must include openid and email (operators are matched by email)'),
    )
    .default(['openid', 'email']),
  /** The button reads "Sign in with <name>". */
  name: z.string().min(1).max(60).default('single sign-on'),
  createOperators: createOperators.default(false),
});

export type OidcConfig = z.infer<typeof oidc>;

const postgresUrl = z
  .string()
  .url()
  .refine((u) => /^postgres(ql)?:\/\//.test(u), 'must be a postgres:// or postgresql:// URL');

const schema = z
  .object({
    env: z.string(),
    port: z.coerce.number().int().min(0).max(65535),
    host: z.string().min(1),
    databaseUrl: postgresUrl.optional(),
    /** How long a start waits for DATABASE_URL's server to accept connections (it may be starting beside Palaver). */
    databaseRetrySeconds: z.coerce.number().nonnegative(),
    redisUrl: z
      .string()
      .url()
      .refine((u) => /^rediss?:\/\//.test(u), 'must be a redis:// or rediss:// URL')
      .optional(),
    dataDir: z.string().min(1),
    /** How often the tables are checked for vacuuming where the database runs no autovacuum (db/vacuum.ts). */
    vacuumIntervalSeconds: z.coerce.number().positive(),
    /** Proxies whose X-Forwarded-For is believed (addresses.ts); none by default: the TCP peer is the client. */
    trustedProxies: addressList,
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    /** `auto`: readable lines when the output is a terminal, JSON otherwise (files, pipes, log collectors). */
    logFormat: z.enum(['auto', 'json', 'pretty']),
    http: z.object({
      jsonLimit: z.string().regex(/^\d+(b|kb|mb)$/, 'must look like 256kb or 1mb'),
      requestTimeoutMs: z.coerce.number().int().positive(),
      /**
       * How long an idle keep-alive connection stays open. Behind a load balancer, longer than its
       * idle timeout: otherwise the node may close a connection the balancer is reusing (a 502).
       */
      keepAliveTimeoutMs: z.coerce.number().int().positive(),
      /** Open connections one client address may hold (slow clients included); trusted proxies are not counted. */
      maxConnectionsPerAddress: z.coerce.number().int().positive(),
    }),
    shutdownTimeoutMs: z.coerce.number().int().positive(),
    admin: z.object({
      email: z.string().email().optional(),
      password: z.string().min(8, 'must be at least 8 characters').optional(),
      sessionTtlSeconds: z.coerce.number().int().positive(),
      /** Failed logins per email and client address per window; a right password starts it over. */
      loginRateLimit: rateLimit,
      /** Failed logins per client address (any email) per window. */
      loginAddressRateLimit: rateLimit,
      /** Failed logins per email from any address per window: keep the window short, it slows guessing from many addresses. */
      loginEmailRateLimit: rateLimit,
      /** Two-factor codes (sign-in, enrolment, turning it off) per operator per window. */
      twoFactorRateLimit: rateLimit,
      /** How long a password-reset link works. */
      passwordResetTtlSeconds: z.coerce.number().int().positive(),
      /** How long the second step of a sign-in (the two-factor code) may wait after the password. */
      twoFactorChallengeTtlSeconds: z.coerce.number().int().positive(),
    }),
    /**
     * The address operators reach Palaver at (`https://chat.example.com`), for links Palaver makes
     * (password resets). Unset: the address of the request (the CLI: http://localhost:<port>).
     */
    publicUrl: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//.test(u), 'must be an http:// or https:// URL')
      .transform((u) => u.replace(/\/+$/, ''))
      .optional(),
    security: z.object({
      /**
       * log2 of scrypt's N for operator passwords. Hashes made with another cost are made again at
       * the operator's next sign-in. Production refuses less than the default (see the refinement).
       */
      passwordHashCost: z.coerce.number().int().min(10).max(20),
    }),
    /** The audit log (docs/security.md): how long entries are kept, and how often each node deletes older ones. */
    audit: z.object({
      retentionDays: z.coerce.number().int().positive(),
      sweepIntervalSeconds: z.coerce.number().positive(),
    }),
    /** Uploads (Client and Service API): a storage quota per account, and the sweeper of unsent uploads. */
    media: z
      .object({
        /** The sum of an account's upload sizes may not pass this (413 storage_quota_exceeded). */
        storageQuotaBytes: z.coerce.number().int().positive(),
        /** The window of the two quotas below: bytes uploaded within the last this many seconds. */
        quotaWindowSeconds: z.coerce.number().int().positive(),
        /** What the visitors of one conversation may upload per window (429 conversation_upload_quota_exceeded). */
        conversationQuotaBytes: z.coerce.number().int().positive(),
        /** What one device may upload per window (429 device_upload_quota_exceeded). */
        deviceQuotaBytes: z.coerce.number().int().positive(),
        /** An upload no message refers to is deleted (row and file) once this old. */
        unreferencedTtlSeconds: z.coerce.number().int().positive(),
        /** How often each node sweeps. */
        sweepIntervalSeconds: z.coerce.number().positive(),
      })
      // The window quotas count the uploads' rows: an unsent upload swept inside the window would stop counting.
      .refine((media) => media.unreferencedTtlSeconds >= media.quotaWindowSeconds, {
        message: 'must be at least media.quotaWindowSeconds (uploads are counted by their rows while in the window)',
        path: ['unreferencedTtlSeconds'],
      }),
    webhooks: z.object({
      allowPrivate: booleanLike,
      /** Seconds before each attempt: the first is made at once (0), then the waits between retries. */
      retrySchedule: secondsList.refine((list) => list[0] === 0, 'the first value (the first attempt) must be 0'),
      timeoutMs: z.coerce.number().int().positive(),
      pollIntervalMs: z.coerce.number().int().positive(),
      maxInFlight: z.coerce.number().int().positive(),
      maxPerService: z.coerce.number().int().positive(),
      /** How long a rotated-out signing secret keeps signing beside the new one. */
      secretGraceSeconds: z.coerce.number().int().nonnegative(),
      /** Off only for a node that should accept writes but leave sending to others. */
      enabled: booleanLike,
    }),
    /** Pushes to app devices (docs/push.md); the rest of their engine is the webhooks'. */
    push: z.object({
      /** Where FCM access tokens are asked for (JWT bearer grant). */
      fcmTokenUrl: z.string().url(),
      /** Base of FCM's send endpoint: {fcmSendUrl}/v1/projects/{project}/messages:send. */
      fcmSendUrl: z.string().url(),
    }),
    /** Answers by email (docs/operations.md): off while `smtp` is unset; the links start with `publicUrl`. */
    email: z.object({
      /** An agent message unseen this long after the last of its burst, with no socket of the customer connected, is emailed. */
      unseenAfterSeconds: z.coerce.number().int().positive(),
      /** How long the file links of an email work. */
      linkTtlSeconds: z.coerce.number().int().positive(),
      /** Signs the links of emails (files, unsubscribe, the way back); the same on every node. */
      linkSecret: z.string().min(32, 'must be at least 32 characters').optional(),
      smtp: z
        .object({
          host: z.string().min(1),
          port: z.coerce.number().int().min(1).max(65535).default(587),
          /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
          secure: booleanLike.default(false),
          /** Refuse to send unless STARTTLS succeeds (for a non-`secure` port). */
          requireTls: booleanLike.default(false),
          user: z.string().min(1).optional(),
          password: z.string().min(1).optional(),
          /** The From of every email: `Support <support@example.com>`. */
          from: z.string().min(3),
          /** How long one SMTP conversation (connect, send, answer) may take. */
          timeoutMs: z.coerce.number().int().positive().default(30000),
        })
        .optional(),
      /**
       * Replies by email and transcripts (docs/operations.md "Replies by email"): with `domain`
       * set, emails carry a signed Reply-To `reply+<token>@<domain>`; the customer's reply
       * reaches Palaver through the SMTP listener or the inbound-mail webhook route.
       */
      inbound: z.object({
        /** The domain whose MX points at Palaver's listener (or the mail provider's inbound route). */
        domain: z
          .string()
          .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i, 'must be a domain name')
          .optional(),
        /** Signs reply addresses; the same on every node. */
        secret: z.string().min(32, 'must be at least 32 characters').optional(),
        /** The secret before the last rotation: its addresses are still accepted. */
        previousSecret: z.string().min(32, 'must be at least 32 characters').optional(),
        /** The largest reply taken (SMTP SIZE, the webhook's body). */
        maxBytes: z.coerce.number().int().positive(),
        /** Replies per reply address (one customer) per window. */
        rateLimit: rateLimit,
        /** The listener for the MX: off unless enabled. */
        smtp: z.object({
          enabled: booleanLike,
          host: z.string().min(1),
          port: z.coerce.number().int().min(0).max(65535),
          /** PEM files: set both to offer STARTTLS. */
          tlsKeyFile: z.string().min(1).optional(),
          tlsCertFile: z.string().min(1).optional(),
        }),
        /** Set: POST /email/inbound takes replies from a hosted mail provider, authenticated with it. */
        webhookSecret: z.string().min(32, 'must be at least 32 characters').optional(),
      }),
      /** Transcripts asked for by customers, per user per window. */
      transcriptRateLimit: rateLimit,
    }),
    client: z.object({
      /** A startTyping with no stopTyping after this long gets a stopTyping from the server. */
      typingTimeoutMs: z.coerce.number().int().positive(),
      /** Upload caps per kind of file (media/types.ts says which types are of which kind). */
      mediaMaxBytes: z.object({
        image: z.coerce.number().int().positive(),
        document: z.coerce.number().int().positive(),
        audio: z.coerce.number().int().positive(),
        video: z.coerce.number().int().positive(),
      }),
      /**
       * The longest a registered user's authorization header may be valid for, from now. At most a
       * year: a bounded lifetime is part of what keeps a header from being re-split (authorization.ts).
       */
      authorizationMaxLifetimeSeconds: z.coerce
        .number()
        .int()
        .positive()
        .max(366 * 86400),
      /** How long a rotated-out authorization secret still verifies users' headers. */
      authorizationSecretGraceSeconds: z.coerce.number().int().nonnegative(),
      /** How long browsers may keep a CORS preflight answer. */
      corsMaxAgeSeconds: z.coerce.number().int().nonnegative(),
      /** Writes per device (messages, uploads, events, registrations) per window. */
      rateLimit: rateLimit,
      /** The same writes per client address (every device and account behind it together) per window. */
      addressRateLimit: rateLimit,
      /** Open sockets per client address on one node; more are refused (too_many_connections). */
      maxSocketsPerAddress: z.coerce.number().int().positive(),
      /** A node's admission of client writes (http/admission.ts): past the bound, 503 server_busy. */
      admission: z.object({
        /** Client writes in progress on one node beyond which more are refused at once. */
        maxWritesInFlight: z.coerce.number().int().positive(),
        /** How long work may wait for a database connection (ms) before client writes are refused. */
        maxDatabaseWaitMs: z.coerce.number().int().positive(),
        /** How long the delivery worker may stay behind (ms), with the event loop full, before client writes are refused. */
        maxDeliveriesBehindMs: z.coerce.number().int().positive(),
        /** How long the Services' answers may wait to be written (ms, mean over a second), with the event loop full, before client writes are refused. */
        maxAnswerWaitMs: z.coerce.number().int().positive(),
        /** The event loop's busy share over a second (0 to 1) that counts as full for maxDeliveriesBehindMs and maxAnswerWaitMs. */
        fullEventLoop: z.coerce.number().positive().max(1),
        /** The wait a refusal asks for (Retry-After, data.retryAfter), in seconds. */
        retryAfterSeconds: z.coerce.number().int().positive(),
      }),
    }),
    demo: booleanLike,
    /**
     * GET / shows a page with the chat widget on one account (the first one, unless named): what
     * a newcomer sees after the first `npm start`. Off in production, where / answers 404.
     */
    demoPage: z.object({
      enabled: booleanLike,
      /** The identification of the account the page uses; unset: the oldest account. */
      account: z.string().min(1).optional(),
    }),
    metrics: z
      .object({
        /** Set: GET /metrics needs `Authorization: Bearer <token>`. */
        token: z.string().min(16, 'must be at least 16 characters').optional(),
        /**
         * Without a token: true serves /metrics to anyone (development and test; in production only
         * behind a proxy that keeps it from the outside), false answers 404 (production's default).
         */
        open: booleanLike.default(false),
      })
      .default({ open: false }),
    /** Single sign-on (docs/security.md): an OpenID provider beside, or instead of, passwords. */
    sso: z
      .object({
        oidc: oidc.optional(),
        /** false: POST /adminApi/login answers 403 password_sign_in_disabled; the sign-in page shows only the SSO button. */
        passwordSignIn: booleanLike,
      })
      // Without a provider, turning passwords off would leave nobody a way in.
      .refine((sso) => sso.passwordSignIn || sso.oidc !== undefined, {
        message: 'can be false only with sso.oidc configured (nobody could sign in)',
        path: ['passwordSignIn'],
      }),
  })
  .superRefine((config, ctx) => {
    // A lower cost is for the tests' speed; in production it would make stolen hashes cheap to crack.
    // The links of emails (files, unsubscribe, the way back) need this server's address and a key.
    if (config.email.smtp && (!config.publicUrl || !config.email.linkSecret)) {
      ctx.addIssue({
        code: 'custom',
        path: ['email', 'smtp'],
        message: 'email.smtp needs publicUrl (PALAVER_PUBLIC_URL) and email.linkSecret (the links of emails)',
      });
    }
    // Reply addresses are signed; a listener or webhook without them could take nothing.
    const inbound = config.email.inbound;
    if ((inbound.domain || inbound.smtp.enabled || inbound.webhookSecret) && (!inbound.domain || !inbound.secret)) {
      ctx.addIssue({
        code: 'custom',
        path: ['email', 'inbound'],
        message:
          'replies by email need email.inbound.domain (PALAVER_EMAIL_INBOUND_DOMAIN) and email.inbound.secret (PALAVER_EMAIL_INBOUND_SECRET)',
      });
    }
    if (Boolean(inbound.smtp.tlsKeyFile) !== Boolean(inbound.smtp.tlsCertFile)) {
      ctx.addIssue({ code: 'custom', path: ['email', 'inbound', 'smtp'], message: 'tlsKeyFile and tlsCertFile go together' });
    }
    if (config.env === 'production' && config.security.passwordHashCost < DEFAULT_HASH_COST) {
      ctx.addIssue({
        code: 'custom',
        path: ['security', 'passwordHashCost'],
        message: `must be at least ${DEFAULT_HASH_COST} in production`,
      });
    }
    // The redirect URI the provider is told of, and where the callback sends the browser back, are
    // made from it; the address of the request would be whatever Host header the caller sent.
    if (config.sso.oidc && config.publicUrl === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['publicUrl'],
        message: 'is required with sso.oidc (the redirect URI is <publicUrl>/adminApi/sso/callback)',
      });
    }
  });

export type Config = z.infer<typeof schema>;

/** Environment variables the outside world relies on, and where each lands in Config. */
const ENV_VARS: ReadonlyArray<[name: string, path: string[]]> = [
  ['PORT', ['port']],
  ['HOST', ['host']],
  ['DATABASE_URL', ['databaseUrl']],
  ['PALAVER_DATABASE_RETRY_SECONDS', ['databaseRetrySeconds']],
  ['REDIS_URL', ['redisUrl']],
  ['PALAVER_DATA_DIR', ['dataDir']],
  ['PALAVER_TRUSTED_PROXIES', ['trustedProxies']],
  ['LOG_LEVEL', ['logLevel']],
  ['PALAVER_LOG_FORMAT', ['logFormat']],
  ['PALAVER_ADMIN_EMAIL', ['admin', 'email']],
  ['PALAVER_ADMIN_PASSWORD', ['admin', 'password']],
  ['PALAVER_WEBHOOK_ALLOW_PRIVATE', ['webhooks', 'allowPrivate']],
  ['PALAVER_RETRY_SCHEDULE', ['webhooks', 'retrySchedule']],
  ['PALAVER_WEBHOOK_TIMEOUT_MS', ['webhooks', 'timeoutMs']],
  ['PALAVER_DELIVERY_WORKER', ['webhooks', 'enabled']],
  ['PALAVER_FCM_TOKEN_URL', ['push', 'fcmTokenUrl']],
  ['PALAVER_FCM_SEND_URL', ['push', 'fcmSendUrl']],
  ['PALAVER_DEMO', ['demo']],
  ['PALAVER_DEMO_PAGE', ['demoPage', 'enabled']],
  ['PALAVER_DEMO_PAGE_ACCOUNT', ['demoPage', 'account']],
  ['PALAVER_METRICS_TOKEN', ['metrics', 'token']],
  ['PALAVER_SSO_ISSUER', ['sso', 'oidc', 'issuer']],
  ['PALAVER_SSO_CLIENT_ID', ['sso', 'oidc', 'clientId']],
  ['PALAVER_SSO_CLIENT_SECRET', ['sso', 'oidc', 'clientSecret']],
  ['PALAVER_SSO_SCOPES', ['sso', 'oidc', 'scopes']],
  ['PALAVER_SSO_NAME', ['sso', 'oidc', 'name']],
  ['PALAVER_SSO_CREATE_OPERATORS', ['sso', 'oidc', 'createOperators']],
  ['PALAVER_PASSWORD_SIGN_IN', ['sso', 'passwordSignIn']],
  ['PALAVER_MEDIA_STORAGE_QUOTA_BYTES', ['media', 'storageQuotaBytes']],
  ['PALAVER_MEDIA_QUOTA_WINDOW_SECONDS', ['media', 'quotaWindowSeconds']],
  ['PALAVER_MEDIA_CONVERSATION_QUOTA_BYTES', ['media', 'conversationQuotaBytes']],
  ['PALAVER_MEDIA_DEVICE_QUOTA_BYTES', ['media', 'deviceQuotaBytes']],
  ['PALAVER_MEDIA_UNSENT_TTL_SECONDS', ['media', 'unreferencedTtlSeconds']],
  ['PALAVER_AUDIT_RETENTION_DAYS', ['audit', 'retentionDays']],
  ['PALAVER_METRICS_OPEN', ['metrics', 'open']],
  ['PALAVER_PUBLIC_URL', ['publicUrl']],
  ['PALAVER_PASSWORD_HASH_COST', ['security', 'passwordHashCost']],
  ['PALAVER_EMAIL_UNSEEN_AFTER_SECONDS', ['email', 'unseenAfterSeconds']],
  ['PALAVER_EMAIL_LINK_TTL_SECONDS', ['email', 'linkTtlSeconds']],
  ['PALAVER_EMAIL_LINK_SECRET', ['email', 'linkSecret']],
  ['PALAVER_SMTP_HOST', ['email', 'smtp', 'host']],
  ['PALAVER_SMTP_PORT', ['email', 'smtp', 'port']],
  ['PALAVER_SMTP_SECURE', ['email', 'smtp', 'secure']],
  ['PALAVER_SMTP_REQUIRE_TLS', ['email', 'smtp', 'requireTls']],
  ['PALAVER_SMTP_USER', ['email', 'smtp', 'user']],
  ['PALAVER_SMTP_PASSWORD', ['email', 'smtp', 'password']],
  ['PALAVER_SMTP_FROM', ['email', 'smtp', 'from']],
  ['PALAVER_EMAIL_INBOUND_DOMAIN', ['email', 'inbound', 'domain']],
  ['PALAVER_EMAIL_INBOUND_SECRET', ['email', 'inbound', 'secret']],
  ['PALAVER_EMAIL_INBOUND_PREVIOUS_SECRET', ['email', 'inbound', 'previousSecret']],
  ['PALAVER_EMAIL_INBOUND_MAX_BYTES', ['email', 'inbound', 'maxBytes']],
  ['PALAVER_EMAIL_INBOUND_SMTP', ['email', 'inbound', 'smtp', 'enabled']],
  ['PALAVER_EMAIL_INBOUND_SMTP_HOST', ['email', 'inbound', 'smtp', 'host']],
  ['PALAVER_EMAIL_INBOUND_SMTP_PORT', ['email', 'inbound', 'smtp', 'port']],
  ['PALAVER_EMAIL_INBOUND_SMTP_TLS_KEY_FILE', ['email', 'inbound', 'smtp', 'tlsKeyFile']],
  ['PALAVER_EMAIL_INBOUND_SMTP_TLS_CERT_FILE', ['email', 'inbound', 'smtp', 'tlsCertFile']],
  ['PALAVER_EMAIL_INBOUND_WEBHOOK_SECRET', ['email', 'inbound', 'webhookSecret']],
];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Tree = { [key: string]: unknown };

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function merge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isTree(current) && isTree(value) ? merge(current, value) : value;
  }
  return out;
}

function setPath(tree: Tree, keys: string[], value: unknown): void {
  let node = tree;
  keys.slice(0, -1).forEach((key) => {
    const next = node[key];
    node[key] = isTree(next) ? { ...next } : {};
    node = node[key] as Tree;
  });
  node[keys[keys.length - 1] as string] = value;
}

function readJson(file: string, problems: string[]): Tree {
  if (!existsSync(file)) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (isTree(parsed)) return parsed;
    problems.push(`${file}: must hold a JSON object`);
  } catch (err) {
    problems.push(`${file}: ${(err as Error).message}`);
  }
  return {};
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  configDir?: string;
  overrides?: Tree;
}

export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const configDir = options.configDir ?? path.resolve(import.meta.dirname, '..', 'config');
  const envName = env.NODE_ENV ?? 'development';
  const problems: string[] = [];

  let tree = merge(readJson(path.join(configDir, 'default.json'), problems), {
    env: envName,
  });
  tree = merge(tree, readJson(path.join(configDir, `${envName}.json`), problems));
  const fromEnv: Tree = {};
  for (const [name, keys] of ENV_VARS) {
    const value = env[name];
    // An empty variable counts as unset, as shells and compose files often leave them so.
    if (value !== undefined && value !== '') setPath(fromEnv, keys, value);
  }
  tree = merge(merge(tree, fromEnv), options.overrides ?? {});

  const result = schema.safeParse(tree);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const key = issue.path.join('.');
      const envName = ENV_VARS.find(([, keys]) => keys.join('.') === key)?.[0];
      problems.push(`${envName ? `${envName} (${key})` : key}: ${issue.message}`);
    }
  }
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return result.data;
}
