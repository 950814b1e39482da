// `npx tsx scripts/bench/service-answers.ts [REQUESTS]`: the server's CPU per Service API answer
// (POST /serviceApi/v2.3/users/{id}/messages, 32 in flight, the pipeline's answer path alone) on
// the benchmark PostgreSQL, read from /proc after a quarter as many unmeasured. With the server
// given scripts/bench/promises.ts (BENCH_NODE_ARGS), the promises it made per answer too.
import { readFileSync } from 'node:fs';
import { registerDevices, startPalaver } from './palaver.ts';
import { freshDatabase } from './support.ts';

const CLOCK_TICKS = 100;
const total = Number(process.argv[2] ?? 4000);

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** The server's promises so far, if it counts them (promises.ts), else null. */
async function promisesOf(pid: number): Promise<number | null> {
  if (!process.env.BENCH_NODE_ARGS?.includes('promises.ts')) return null;
  process.kill(pid, 'SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, 300));
  return Number(readFileSync(`/tmp/palaver-promises.${pid}`, 'utf8'));
}

const database = await freshDatabase('answers');
// No message of this benchmark causes a webhook (agent messages go to the customer's sockets).
const palaver = await startPalaver(database.url, 'http://127.0.0.1:9/hook');
try {
  const pid = palaver.child.pid;
  if (!pid) throw new Error('a server without a pid');
  const users = await registerDevices(palaver, 32, 'answers');
  const answer = async (userId: number, i: number) => {
    const response = await fetch(`${palaver.url}/serviceApi/v2.3/users/${userId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${palaver.service.apiKey}` },
      body: JSON.stringify({ message: `answer ${i}`, agent: { id: 1, name: 'Bench bot' } }),
    });
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`POST answered ${response.status}`);
  };
  const run = async (count: number) => {
    let next = 0;
    await Promise.all(
      users.map(async ({ userId }) => {
        while (next < count) await answer(userId, next++);
      }),
    );
  };
  await run(Math.ceil(total / 4));
  const promises0 = await promisesOf(pid);
  const cpu0 = cpuSeconds(pid);
  await run(total);
  const cpu = cpuSeconds(pid) - cpu0;
  const promises1 = await promisesOf(pid);
  process.stdout.write(
    `${JSON.stringify({
      answers: total,
      server_cpu_ms: Math.round((cpu / total) * 1e6) / 1e3,
      ...(promises0 !== null && promises1 !== null ? { promises: Math.round(((promises1 - promises0) / total) * 10) / 10 } : {}),
    })}\n`,
  );
} finally {
  await palaver.stop();
  await database.drop();
}
