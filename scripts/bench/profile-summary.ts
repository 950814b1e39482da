// Summarises a V8 CPU profile (`node --cpu-prof`, e.g. the server of a benchmark run with
// BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=prof"): busy time by owner (the nearest library or
// Palaver directory on each sample's stack, so native frames count with the JavaScript that
// called them), inclusive time by owner (a sample counts once for every owner on its stack), and
// the functions with the most self time. Times are divided by `--per` (e.g. the round trips of
// the run) when given.
//
//   node --import tsx scripts/bench/profile-summary.ts prof/CPU.….cpuprofile [--per 3600] [--skip 10] [--until 40] [--top 40]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    per: { type: 'string' },
    skip: { type: 'string', default: '0' },
    until: { type: 'string' },
    top: { type: 'string', default: '40' },
  },
});
const file = positionals[0];
if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [--per N] [--skip SECONDS] [--until SECONDS] [--top N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const per = Number(values.per ?? 1);
const skipUs = Number(values.skip) * 1e6;
/** Samples after this many seconds are left out too (a window: one step of a run). */
const untilUs = values.until === undefined ? Infinity : Number(values.until) * 1e6;
const top = Number(values.top);

/** Who owns a frame: a package under node_modules, a directory of src/, node's core, or a V8 pseudo-frame. */
function ownerOf(node: ProfileNode): string | null {
  const { url, functionName } = node.callFrame;
  if (url === '') {
    if (functionName === '(idle)' || functionName === '(program)' || functionName === '(garbage collector)' || functionName === '(root)') {
      return functionName;
    }
    return null; // native: counts with its caller
  }
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const src = url.indexOf('/src/');
  if (src >= 0 && !url.startsWith('node:')) {
    const parts = url.slice(src + 1).split('/');
    return parts.length > 2 ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
  }
  if (url.startsWith('node:')) return null; // node's core: counts with the library that called it
  return url;
}

const byId = new Map<number, ProfileNode>();
const parent = new Map<number, number>();
for (const node of profile.nodes) {
  byId.set(node.id, node);
  for (const child of node.children ?? []) parent.set(child, node.id);
}

const selfOwner = new Map<number, string>();
const ownersOnStack = new Map<number, Set<string>>();
function resolve(id: number): void {
  if (selfOwner.has(id)) return;
  const node = byId.get(id);
  if (!node) return;
  const up = parent.get(id);
  if (up !== undefined) resolve(up);
  const own = ownerOf(node);
  const inherited = up !== undefined ? selfOwner.get(up) : undefined;
  const core = node.callFrame.url.startsWith('node:') ? 'node core' : 'native';
  selfOwner.set(id, own ?? (inherited === undefined || inherited === '(root)' ? core : inherited));
  const stack = new Set(up !== undefined ? ownersOnStack.get(up) : []);
  if (own) stack.add(own);
  ownersOnStack.set(id, stack);
}

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const functions = new Map<string, number>();
let time = profile.startTime;
let busy = 0;
/** Busy ms in each second of the profile, to choose --skip (startup, warm-up). */
const timeline: number[] = [];
for (let i = 0; i < profile.samples.length; i++) {
  const delta = profile.timeDeltas[i] ?? 0;
  time += delta;
  const id = profile.samples[i];
  if (id === undefined) continue;
  resolve(id);
  const owner = selfOwner.get(id) ?? 'native';
  if (owner === '(idle)') continue;
  const second = Math.floor((time - profile.startTime) / 1e6);
  timeline[second] = (timeline[second] ?? 0) + delta / 1000;
  if (time - profile.startTime < skipUs || time - profile.startTime > untilUs) continue;
  busy += delta;
  self.set(owner, (self.get(owner) ?? 0) + delta);
  for (const o of ownersOnStack.get(id) ?? []) if (o !== '(root)') inclusive.set(o, (inclusive.get(o) ?? 0) + delta);
  const node = byId.get(id);
  if (node) {
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + delta);
  }
}

const ms = (us: number) => (us / 1000 / per).toFixed(per === 1 ? 0 : 3);
const pct = (us: number) => `${((us / busy) * 100).toFixed(1)}%`;
const unit = per === 1 ? 'ms' : `ms per ${per}th`;
const table = (title: string, rows: Map<string, number>, limit: number) => {
  console.log(`\n${title}`);
  for (const [key, us] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
    console.log(`${ms(us).padStart(10)} ${pct(us).padStart(6)}  ${key}`);
  }
};
console.log(`busy ms each second: ${Array.from(timeline, (v) => Math.round(v ?? 0)).join(' ')}`);
console.log(`busy ${ms(busy)} ${unit} (${(busy / 1e6).toFixed(2)} s after --skip)`);
table('self, by owner (native frames with their caller)', self, top);
table('inclusive, by owner', inclusive, top);
table('self, by function', functions, top);
