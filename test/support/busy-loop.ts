// Fills this process's event loop, for the admission's signs that need it full
// (http/event-loop-busy.ts): a test server runs in the test's process, so the loop is the
// server's. Busy 45 ms of every 46 or so; the returned function stops it.
import { performance } from 'node:perf_hooks';

export function fillEventLoop(): () => void {
  const timer = setInterval(() => {
    const end = performance.now() + 45;
    while (performance.now() < end);
  }, 1);
  return () => clearInterval(timer);
}
