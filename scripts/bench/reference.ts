// The one-file reference (reference-pipeline.ts) as the benchmarks run it: a process of its own
// on a fresh PostgreSQL database or its own embedded one, its webhooks to the given Service, with
// an API key and a webhook secret made for the run; and its capacity, for `capacity`'s ratio.
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchCapacity, type CapacityOptions } from './capacity.ts';
import { freshDatabase, startHelper, type Metric } from './support.ts';

export interface BenchReference {
  url: string;
  child: ChildProcess;
  apiKey: string;
  /** The PostgreSQL database's name (its backends' CPU is read by it); none when embedded. */
  database?: string;
  stop(): Promise<void>;
}

export async function startReference(mode: 'postgresql' | 'embedded', webhookUrl: string): Promise<BenchReference> {
  const database = mode === 'postgresql' ? await freshDatabase('reference') : undefined;
  const dataDir = mode === 'embedded' ? mkdtempSync(path.join(os.tmpdir(), 'reference-pipeline-')) : undefined;
  const apiKey = randomBytes(24).toString('base64url');
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  // Profiled like Palaver when BENCH_NODE_ARGS asks for it, so that the two profiles compare.
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const helper = await startHelper(
    'scripts/bench/reference-pipeline.ts',
    [database?.url ?? `embedded:${dataDir}`, webhookUrl, apiKey, secret],
    nodeArgs,
  );
  return {
    url: `http://127.0.0.1:${helper.port}`,
    child: helper.child,
    apiKey,
    ...(database ? { database: new URL(database.url).pathname.slice(1) } : {}),
    stop: async () => {
      if (helper.child.exitCode === null) {
        const exited = new Promise((resolve) => helper.child.once('exit', resolve));
        helper.stop();
        await exited;
      }
      await database?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The reference's capacity under the same load as Palaver's, answered by the same Service
 * process (told to answer the reference): Palaver's steps, then larger ones (as far apart as
 * its last two) while they hold, up to twice its largest; no overload step.
 */
export async function referenceCapacity(mode: 'postgresql' | 'embedded', serviceUrl: string, options: CapacityOptions): Promise<Metric> {
  const reference = await startReference(mode, `${serviceUrl}/hook`);
  try {
    const configured = await fetch(`${serviceUrl}/configure`, {
      method: 'POST',
      body: JSON.stringify({ palaverUrl: reference.url, apiKey: reference.apiKey }),
    });
    await configured.arrayBuffer();
    const last = options.steps.at(-1) ?? 1000;
    const stride = Math.max(last - (options.steps.at(-2) ?? 0), 500);
    const steps = [...options.steps];
    for (let next = last + stride; next <= last * 2; next += stride) steps.push(next);
    const result = await benchCapacity(
      { ...reference, account: { identification: 'reference' }, outbox: false, serviceUrl },
      { ...options, steps, overload: false, inspectPort: undefined, snapshotDir: undefined, stopAtKnee: true },
    );
    // Every step held: the reference holds at least this many, more than was asked.
    return { ...result, at_least: result.value === steps.at(-1) };
  } finally {
    await reference.stop();
  }
}
