// Builds one running Palaver: the HTTP port (bound first), database (migrated), bootstrap, Koa
// app, the delivery worker, and a close() that stops accepting, lets in-flight requests and webhook
// attempts finish and closes the database.
import { Admission } from './http/admission.ts';
import { EventLoopBusy } from './http/event-loop-busy.ts';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { TrustedProxies } from './addresses.ts';
import type { Config } from './config.ts';
import { migrate, openDatabase, type Database } from './db/orm.ts';
import { PoolWaits } from './db/pool-waits.ts';
import { TableVacuum, vacuumedBy, type VacuumedBy } from './db/vacuum.ts';
import { outletsOf } from './db/tx/outlets.ts';
import { WriteWaits } from './db/tx/write-waits.ts';
import { answerClientErrors } from './http/client-errors.ts';
import { buildEnvelope } from './presenters/envelope.ts';
import type { AppDeps } from './deps.ts';
import { createApp } from './http/app.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics } from './metrics.ts';
import { countPending } from './deliveries/listings.ts';
import { DeliveryWorker } from './deliveries/worker.ts';
import { InboundMail } from './email/inbound.ts';
import { InboundSmtpListener } from './email/inbound-smtp.ts';
import { ClientCallers } from './api/client/caller.ts';
import { ServiceCallers } from './api/service/caller.ts';
import { agentMessageWriter } from './conversations/agents.ts';
import { clientMessageWriter } from './conversations/client-messages.ts';
import { TypingTimeouts } from './conversations/client-events.ts';
import { createLimiter as newLimiter, limitsNamespace, type Limits } from './limits.ts';
import { DiskMediaStorage } from './media/storage.ts';
import { MediaSweeper } from './media/sweeper.ts';
import { AuditSweeper } from './audit/sweeper.ts';
import { capConnectionsPerAddress } from './http/connection-cap.ts';
import { Gateway } from './realtime/gateway.ts';
import { bootstrap, type DemoSetup } from './setup/bootstrap.ts';

export interface RunningServer {
  url: string;
  port: number;
  http: Server;
  deps: AppDeps;
  demo: DemoSetup | null;
  /** The SMTP listener of replies by email, when `email.inbound.smtp.enabled`. */
  inboundSmtp: InboundSmtpListener | undefined;
  /** Who vacuums the tables: the database's autovacuum, or this node's sweep (db/vacuum.ts). */
  vacuuming: VacuumedBy;
  close(): Promise<void>;
}

/**
 * Redis is an optimisation, never required: the client is not awaited at start (a node starts
 * and serves while Redis is down), connects in the background and reconnects forever, backing
 * off up to 2 s between attempts. A command sent while it is away fails after two reconnection
 * attempts instead of waiting; each user of Redis handles that (limits.ts, the gateway).
 */
function createRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  // One warning per outage, not one per reconnection attempt.
  let warned = false;
  redis.on('error', (err: Error) => {
    if (warned) return logger.debug({ err: err.message }, 'redis error');
    warned = true;
    logger.warn({ err: err.message }, 'redis unavailable: rate limits in memory, notices to this node only, until it is back');
  });
  redis.on('ready', () => {
    if (warned) logger.info('redis connected again');
    warned = false;
  });
  // The first attempt's failure is only logged: retryStrategy goes on trying.
  redis.connect().catch(() => undefined);
  return redis;
}

/** The port is held by another program: said in one line, with what to do. */
export class PortInUseError extends Error {
  constructor(
    readonly port: number,
    readonly host: string,
  ) {
    super(`Port ${port} (${host}) is in use by another program (EADDRINUSE): stop it, or start Palaver with another PORT.`);
    this.name = 'PortInUseError';
  }
}

/**
 * Until the app is built, requests are answered 503 `starting` (the envelope of every answer),
 * so that a port taken early never reaches a client half set up.
 */
function answerStarting(req: IncomingMessage, res: ServerResponse): void {
  const envelope = buildEnvelope({ path: req.url ?? '/', method: req.method ?? 'GET', startedAt: process.hrtime.bigint() }, false, {
    notifications: [{ type: 'error', message: 'starting' }],
  });
  res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' }).end(JSON.stringify(envelope));
}

/** Binds the port: what most often fails at start (another program on it), so it is done before anything is written. */
async function listen(http: Server, config: Pick<Config, 'port' | 'host'>): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRINUSE' ? new PortInUseError(config.port, config.host) : err);
    http.once('error', failed);
    http.listen(config.port, config.host, () => {
      http.off('error', failed);
      resolve();
    });
  });
}

export async function startServer(config: Config, logger: Logger = createLogger(config)): Promise<RunningServer> {
  let handler: RequestListener = answerStarting;
  const http = createServer(
    { requestTimeout: config.http.requestTimeoutMs, keepAliveTimeout: config.http.keepAliveTimeoutMs },
    (req, res) => handler(req, res),
  );
  const trustedProxies = new TrustedProxies(config.trustedProxies);
  capConnectionsPerAddress(http, { max: config.http.maxConnectionsPerAddress, trustedProxies, logger });
  answerClientErrors(http);
  // The port first: a start that cannot serve writes nothing (no demo setup made by a start that
  // then fails on a port another program holds).
  await listen(http, config);
  let db: Database;
  try {
    db = await openDatabase(config, logger);
  } catch (err) {
    await new Promise((resolve) => http.close(resolve));
    throw err;
  }
  let redis: Redis | undefined;
  try {
    await migrate(db, logger);
    const demo = await bootstrap(db.orm.em.fork(), config, logger);
    redis = config.redisUrl ? createRedis(config.redisUrl, logger) : undefined;
    const metrics = createMetrics(() => countPending(db.orm.em.fork()), db.embeddedReadings);
    // A rate-limit call answered from memory because Redis failed: counted, and warned of once a minute.
    let fallbackWarnedAt = 0;
    const redisFallback = (limiter: string) => {
      metrics.redisFallbacks.inc({ limiter });
      if (Date.now() - fallbackWarnedAt < 60_000) return;
      fallbackWarnedAt = Date.now();
      logger.warn({ limiter }, "rate limits fall back to this node's memory: redis unavailable");
    };
    const namespace = limitsNamespace(config.databaseUrl);
    const createLimiter = (name: string, options: Limits) => newLimiter(name, options, redis, redisFallback, namespace);
    const worker = config.webhooks.enabled
      ? new DeliveryWorker({
          orm: db.orm,
          options: config.webhooks,
          push: config.push,
          email: { ...config.email, publicUrl: config.publicUrl },
          // The gateway is made below; the worker asks only once it runs.
          presence: { connected: (userId) => realtime.isConnected(userId) },
          logger,
          metrics,
        })
      : undefined;
    // Forks of the root, not of the context of the request that happens to start a batch: that
    // context's own fork is then never made (http/middleware/orm-context.ts).
    const em = () => db.orm.em.fork({ disableContextResolution: true });
    const typing = new TypingTimeouts(config.client.typingTimeoutMs, em, logger);
    const poolWaits = PoolWaits.of(db.orm.em);
    const loopBusy = new EventLoopBusy();
    // How long the Services' answers wait in the agents' writer: a sign of the admission's.
    const answerWaits = new WriteWaits();
    const admission = new Admission(config.client.admission, (reason) => metrics.clientWritesRefused.inc({ reason }), {
      databaseWaitMs: () => poolWaits.waitMs(),
      deliveriesBehindMs: (): number => worker?.behindMs() ?? 0,
      eventLoopBusy: () => loopBusy.share(),
      answersWaitMs: () => answerWaits.waitMs(),
    });
    metrics.clientWritesInFlight.read = () => admission.writesInFlight;
    metrics.databaseWait.read = () => admission.databaseWaitMs;
    metrics.answersWait.read = () => answerWaits.waitMs();
    const writeLimiter = createLimiter('writes', config.client.rateLimit);
    const addressWriteLimiter = createLimiter('address-writes', config.client.addressRateLimit);
    const messages = clientMessageWriter({
      em,
      logger,
      batchSize: metrics.messageBatchSize,
      oneStatementBatches: metrics.oneStatementBatches,
      oneSession: db.embedded,
    });
    const agentMessages = agentMessageWriter({
      em,
      logger,
      waits: answerWaits,
      batchSize: metrics.messageBatchSize,
      email: config.email.smtp ? { unseenAfterSeconds: config.email.unseenAfterSeconds } : null,
      oneStatementBatches: metrics.oneStatementBatches,
      oneSession: db.embedded,
    });
    const callers = new ClientCallers(em, config.client.authorizationMaxLifetimeSeconds);
    const serviceCallers = new ServiceCallers(db.orm.em);
    const realtime = new Gateway({
      em,
      logger,
      redis,
      redisNamespace: namespace,
      typing,
      admission,
      writeLimiter,
      addressWriteLimiter,
      trustedProxies,
      maxSocketsPerAddress: config.client.maxSocketsPerAddress,
      messages,
      callers,
      serviceCallers,
    });
    // Committed transactions' notices go to the gateway (db/tx/outlets.ts); the worker joins at start().
    outletsOf(db.orm.em).gateway = realtime;
    const { inbound: inboundConfig } = config.email;
    const inbound =
      inboundConfig.domain && inboundConfig.secret
        ? new InboundMail({
            em,
            messages,
            limiter: createLimiter('email-replies', inboundConfig.rateLimit),
            logger,
            metrics,
            options: {
              keys: { domain: inboundConfig.domain, secret: inboundConfig.secret, previousSecret: inboundConfig.previousSecret },
              maxBytes: inboundConfig.maxBytes,
            },
          })
        : undefined;
    const deps: AppDeps = {
      config,
      logger,
      db,
      metrics,
      redis,
      deliveries: worker,
      typing,
      messages,
      agentMessages,
      callers,
      serviceCallers,
      media: new DiskMediaStorage(path.resolve(config.dataDir, 'media')),
      admission,
      writeLimiter,
      addressWriteLimiter,
      loginLimiter: createLimiter('logins', config.admin.loginRateLimit),
      loginAddressLimiter: createLimiter('login-addresses', config.admin.loginAddressRateLimit),
      loginEmailLimiter: createLimiter('login-emails', config.admin.loginEmailRateLimit),
      twoFactorLimiter: createLimiter('two-factor', config.admin.twoFactorRateLimit),
      trustedProxies,
      realtime,
      inbound,
      transcriptLimiter: createLimiter('transcripts', config.email.transcriptRateLimit),
    };
    // Read before the node takes requests, so that nothing waits on the database between the
    // sockets being served and the start being announced (clients reconnect in that window).
    const vacuuming = await vacuumedBy(em(), db.embedded);
    const app = createApp(deps);
    const callback = app.callback();
    handler = (req, res) => void callback(req, res);
    realtime.attach(http);
    const { port } = http.address() as AddressInfo;
    const shownHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    const inboundSmtp =
      inbound && inboundConfig.domain && inboundConfig.smtp.enabled
        ? new InboundSmtpListener(inbound, { ...inboundConfig.smtp, domain: inboundConfig.domain }, logger)
        : undefined;
    await inboundSmtp?.start();
    worker?.start();
    loopBusy.start();
    const sweeper = new MediaSweeper(
      em,
      deps.media,
      {
        unreferencedTtlSeconds: config.media.unreferencedTtlSeconds,
        intervalSeconds: config.media.sweepIntervalSeconds,
      },
      logger,
    );
    sweeper.start();
    const auditSweeper = new AuditSweeper(
      em,
      { retentionDays: config.audit.retentionDays, intervalSeconds: config.audit.sweepIntervalSeconds },
      logger,
    );
    auditSweeper.start();
    const vacuum = vacuuming === 'palaver' ? new TableVacuum(em, config.vacuumIntervalSeconds, logger) : undefined;
    vacuum?.start();
    if (vacuuming === 'palaver' && !db.embedded) {
      logger.warn(
        `autovacuum is off on this database: Palaver vacuums and analyses its own tables every ${config.vacuumIntervalSeconds} s (vacuumIntervalSeconds)`,
      );
    } else if (vacuuming === 'nobody') {
      logger.warn('track_counts is off on this database: nothing can tell which tables need vacuuming or new statistics; turn it on');
    }
    logger.info({ port, embeddedDatabase: db.embedded }, `palaver listening on http://${shownHost}:${port}`);
    if (config.metrics.token === undefined && !config.metrics.open) {
      logger.warn(
        '/metrics answers 404: set metrics.token (PALAVER_METRICS_TOKEN) for your scraper, or metrics.open (PALAVER_METRICS_OPEN=true) if a proxy keeps /metrics from the outside',
      );
    }

    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
        // Sockets first: their long-polling requests would otherwise hold the HTTP server open.
        await realtime.close();
        await stopHttp(http, config.shutdownTimeoutMs, logger);
        deps.typing.close();
        // Replies being received are written before the writers drain.
        await inboundSmtp?.close();
        // Socket events and requests still in flight hand their messages in up to here.
        await messages.drain();
        await agentMessages.drain();
        // After HTTP, so nothing enqueues behind it; attempts in flight are sent and recorded.
        await worker?.stop();
        loopBusy.stop();
        await sweeper.stop();
        await auditSweeper.stop();
        await vacuum?.stop();
        redis?.disconnect();
        await db.close();
        logger.info('palaver stopped');
      })();
      return closing;
    };
    return { url: `http://${shownHost}:${port}`, port, http, deps, demo, inboundSmtp, vacuuming, close };
  } catch (err) {
    redis?.disconnect();
    await db.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    throw err;
  }
}

/** Stops accepting, waits for in-flight requests, and cuts what is still open after the timeout. */
async function stopHttp(http: Server, timeoutMs: number, logger: Logger): Promise<void> {
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  http.closeIdleConnections();
  const timer = setTimeout(() => {
    logger.warn('shutdown timeout: closing connections still open');
    http.closeAllConnections();
  }, timeoutMs);
  await closed;
  clearTimeout(timer);
}
