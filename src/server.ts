// Builds one running Palaver: database (migrated), bootstrap, Koa app, HTTP server, the
// delivery worker, and a close() that stops accepting, lets in-flight requests and webhook
// attempts finish and closes the database.
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type { Config } from './config.ts';
import { migrate, openDatabase } from './db/orm.ts';
import type { AppDeps } from './deps.ts';
import { createApp } from './http/app.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics } from './metrics.ts';
import { countPending } from './deliveries/store.ts';
import { DeliveryWorker } from './deliveries/worker.ts';
import { ClientCallers } from './api/client/caller.ts';
import { agentMessageWriter } from './conversations/agents.ts';
import { clientMessageWriter } from './conversations/client-messages.ts';
import { TypingTimeouts } from './conversations/events.ts';
import { publishAfterCommit } from './conversations/notices.ts';
import { createLimiter } from './limits.ts';
import { DiskMediaStorage } from './media/storage.ts';
import { Gateway } from './realtime/gateway.ts';
import { bootstrap, type DemoSetup } from './setup/bootstrap.ts';

export interface RunningServer {
  url: string;
  port: number;
  http: Server;
  deps: AppDeps;
  demo: DemoSetup | null;
  close(): Promise<void>;
}

async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis error'));
  await redis.connect();
  return redis;
}

export async function startServer(config: Config, logger: Logger = createLogger(config)): Promise<RunningServer> {
  const db = await openDatabase(config, logger);
  let redis: Redis | undefined;
  try {
    await migrate(db, logger);
    const demo = await bootstrap(db.orm.em.fork(), config, logger);
    redis = config.redisUrl ? await connectRedis(config.redisUrl, logger) : undefined;
    const metrics = createMetrics(() => countPending(db.orm.em.fork()));
    const worker = config.webhooks.enabled
      ? new DeliveryWorker({ orm: db.orm, options: config.webhooks, logger, metrics })
      : undefined;
    const em = () => db.orm.em.fork();
    const typing = new TypingTimeouts(config.client.typingTimeoutMs, em, logger);
    const writeLimiter = createLimiter('writes', config.client.rateLimit, redis);
    const messages = clientMessageWriter({ em, logger, batchSize: metrics.messageBatchSize });
    const agentMessages = agentMessageWriter({ em, logger, batchSize: metrics.messageBatchSize });
    const callers = new ClientCallers(em, config.client.authorizationMaxLifetimeSeconds);
    const realtime = new Gateway({ em, logger, redis, typing, writeLimiter, messages, callers });
    publishAfterCommit(db.orm, realtime);
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
      media: new DiskMediaStorage(path.resolve(config.dataDir, 'media')),
      writeLimiter,
      loginLimiter: createLimiter('logins', config.admin.loginRateLimit, redis),
      realtime,
    };
    const app = createApp(deps);
    const http = createServer({ requestTimeout: config.http.requestTimeoutMs }, app.callback());
    realtime.attach(http);
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(config.port, config.host, () => resolve());
    });
    const { port } = http.address() as AddressInfo;
    const shownHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    worker?.start();
    logger.info({ port, embeddedDatabase: db.embedded }, 'palaver listening');

    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
        // Sockets first: their long-polling requests would otherwise hold the HTTP server open.
        await realtime.close();
        await stopHttp(http, config.shutdownTimeoutMs, logger);
        deps.typing.close();
        // Socket events and requests still in flight hand their messages in up to here.
        await messages.drain();
        await agentMessages.drain();
        // After HTTP, so nothing enqueues behind it; attempts in flight are sent and recorded.
        await worker?.stop();
        redis?.disconnect();
        await db.close();
        logger.info('palaver stopped');
      })();
      return closing;
    };
    return { url: `http://${shownHost}:${port}`, port, http, deps, demo, close };
  } catch (err) {
    redis?.disconnect();
    await db.close();
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
