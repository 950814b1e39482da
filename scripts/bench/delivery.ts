// `delivery`: webhooks delivered per second by the engine (claim, sign, POST, record) against
// a bare got POST loop to the same receiver at the same concurrency, in the same run. The loop
// uses got as the engine does (its stream interface, the answer drained, no decompression), so
// that the ratio is the engine's own cost, not a difference in how got is called.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import got from 'got';
import { loadConfig } from '../../src/config.ts';
import { transaction } from '../../src/db/tx/run.ts';
import { enqueueAll } from '../../src/deliveries/outbox.ts';
import { DeliveryWorker } from '../../src/deliveries/worker.ts';
import { createAccount } from '../../src/tenancy/accounts.ts';
import { createService } from '../../src/tenancy/services.ts';
import { startServer } from '../../src/server.ts';
import { freshDatabase, progress, ratio, startHelper, type Metric } from './support.ts';

export interface DeliveryOptions {
  deliveries: number;
  concurrency: number;
  users: number;
}

const SAMPLE = {
  type: 'message',
  id: 10736,
  time: 1536739157,
  message: 'Hello, I have a question about my order #4411',
  typeId: 1,
  accountIdentification: 'k8s2Jd9fPq1zX0aB',
  accountId: 1,
  requestUrl: 'https://shop.example.com/orders/4411',
  user: { id: '12345', uniqueIdentifier: 'customer-9911', additionalInformation: { plan: 'gold' } },
};

async function bareGotLoop(url: string, total: number, concurrency: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const client = got.extend({ agent: { http: agent }, retry: { limit: 0 }, followRedirect: false, decompress: false });
  const body = JSON.stringify(SAMPLE);
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next += 1;
        await new Promise((resolve, reject) => {
          const stream = client.stream.post(url, { body, headers: { 'content-type': 'application/json' } });
          stream.once('error', reject).once('end', resolve).resume();
        });
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  return total / seconds;
}

export async function benchDelivery(options: DeliveryOptions): Promise<Metric> {
  const receiver = await startHelper('scripts/bench/receiver.ts');
  const database = await freshDatabase('delivery');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'palaver-bench-'));
  const url = `http://127.0.0.1:${receiver.port}/hook`;
  const config = loadConfig({
    env: { NODE_ENV: 'bench' },
    overrides: {
      port: 0,
      host: '127.0.0.1',
      logLevel: 'warn',
      demo: false,
      databaseUrl: database.url,
      dataDir,
      webhooks: {
        enabled: false,
        allowPrivate: true,
        maxInFlight: options.concurrency,
        maxPerService: options.concurrency,
        pollIntervalMs: 50,
      },
    },
  });
  const server = await startServer(config);
  try {
    const em = server.deps.db.orm.em.fork();
    const account = await createAccount(em, { name: 'Bench' });
    const service = await createService(em, account.id, { name: 'Receiver', webhookUrl: url });
    if (!service) throw new Error('account vanished');
    progress(`queueing ${options.deliveries} deliveries for ${options.users} users`);
    for (let offset = 0; offset < options.deliveries; offset += 1000) {
      const requests = Array.from({ length: Math.min(1000, options.deliveries - offset) }, (_, n) => ({
        kind: 'message' as const,
        payload: { ...SAMPLE, id: offset + n },
        recipients: [service.service.id],
        orderingKey: ((offset + n) % options.users) + 1,
      }));
      await transaction(em.fork(), (tx) => enqueueAll(tx, requests));
    }

    progress(`baseline: bare got POST loop, ${options.deliveries} requests at concurrency ${options.concurrency}`);
    const baselineBefore = await bareGotLoop(url, options.deliveries, options.concurrency);

    progress('palaver: delivery engine draining the outbox');
    const worker = new DeliveryWorker({
      orm: server.deps.db.orm,
      options: { ...config.webhooks, enabled: true },
      push: config.push,
      email: { ...config.email, publicUrl: config.publicUrl },
      presence: { connected: () => Promise.resolve(false) },
      logger: server.deps.logger,
      metrics: server.deps.metrics,
    });
    const count = async () => {
      const rows = await em
        .fork()
        .getConnection()
        .execute<Array<{ n: string }>>(`select count(*) as n from deliveries where state = 'delivered'`);
      return Number(rows[0]?.n ?? 0);
    };
    const started = process.hrtime.bigint();
    worker.start();
    while ((await count()) < options.deliveries) await new Promise((r) => setTimeout(r, 50));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await worker.stop();
    const value = options.deliveries / seconds;

    progress('baseline again (the machine is shared: the two runs bracket the engine)');
    const baselineAfter = await bareGotLoop(url, options.deliveries, options.concurrency);
    const baseline = (baselineBefore + baselineAfter) / 2;
    return {
      value: Math.round(value),
      unit: 'deliveries/s',
      baseline: Math.round(baseline),
      ratio: ratio(value, baseline),
      deliveries: options.deliveries,
      concurrency: options.concurrency,
    };
  } finally {
    await server.close();
    receiver.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
