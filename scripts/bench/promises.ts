// Counts the promises a process makes (every one also runs the promise hooks of MikroORM's
// AsyncLocalStorage, and is garbage), for service-answers.ts: given to the server with
// `BENCH_NODE_ARGS="--import tsx --import ./scripts/bench/promises.ts"`, it writes its count so
// far to /tmp/palaver-promises.<pid> on SIGUSR2; with BENCH_PROMISE_SITES=1, also the call sites
// of the promises made since the last signal, most frequent first, to the same name with `.sites`.
import { createHook } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';

let promises = 0;
const sites = new Map<string, number>();
const tracing = process.env.BENCH_PROMISE_SITES === '1';

createHook({
  init(_id, type) {
    if (type !== 'PROMISE') return;
    promises += 1;
    if (!tracing) return;
    const frames = (new Error().stack ?? '')
      .split('\n')
      .slice(2)
      .filter((line) => !line.includes('node:internal'));
    const site = frames
      .slice(0, 3)
      .map((line) => line.trim().replace(/\(?file:\/\/\/\S*\/(node_modules|src)\//, '$1/'))
      .join(' < ');
    sites.set(site, (sites.get(site) ?? 0) + 1);
  },
}).enable();

process.on('SIGUSR2', () => {
  writeFileSync(`/tmp/palaver-promises.${process.pid}`, String(promises));
  if (!tracing) return;
  const lines = [...sites].sort((a, b) => b[1] - a[1]).map(([site, count]) => `${count} ${site}`);
  writeFileSync(`/tmp/palaver-promises.${process.pid}.sites`, `${lines.join('\n')}\n`);
  sites.clear();
});
