// `npx tsx scripts/bench/allocations.ts PORT SECONDS [promoted] [worker]`: what a process started with
// --inspect=127.0.0.1:PORT (the capacity bench's server: its inspector port is on its command
// line) allocates over SECONDS, garbage included, by the function that allocated it, and by
// the functions of src/ with what they called. With `promoted`: only what outlived the young
// generation (see sampleAllocations). With `worker` too: the worker thread's (the embedded database's).
import { sampleAllocations, type AllocationNode } from './inspector.ts';

const [port, seconds] = process.argv.slice(2, 4).map(Number);
const flags = process.argv.slice(4);
const promoted = flags.includes('promoted');
if (!port || !seconds) throw new Error('usage: allocations.ts PORT SECONDS [promoted] [worker]');
const head = await sampleAllocations(port, seconds, promoted, undefined, flags.includes('worker') ? 'worker' : 'main');

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
const name = ({ callFrame: f }: AllocationNode) =>
  `${f.functionName || '(anonymous)'} ${f.url.replace(/.*node_modules\//, '').replace(/.*\/src\//, 'src/')}:${f.lineNumber}`;
/** Bytes under `node`; a function is counted once in its own inclusive total however deep it recurses. */
const walk = (node: AllocationNode, above: Set<string>): number => {
  const key = name(node);
  self.set(key, (self.get(key) ?? 0) + node.selfSize);
  total += node.selfSize;
  const inner = new Set(above).add(key);
  const sum = node.selfSize + node.children.reduce((bytes, child) => bytes + walk(child, inner), 0);
  if (!above.has(key)) inclusive.set(key, (inclusive.get(key) ?? 0) + sum);
  return sum;
};
walk(head, new Set());

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(2).padStart(8);
const top = (entries: Iterable<[string, number]>, count: number) =>
  [...entries]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, bytes]) => `${mb(bytes)} MB ${key}`)
    .join('\n');
process.stdout.write(
  `${mb(total)} MB allocated${promoted ? ' and promoted' : ''} in ${seconds} s\n\nby the function that allocated:\n${top(self, 30)}\n`,
);
process.stdout.write(
  `\nfunctions of src/, with what they called:\n${top(
    [...inclusive].filter(([key]) => key.includes(' src/')),
    30,
  )}\n`,
);
