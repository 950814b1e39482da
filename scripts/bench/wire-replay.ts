// Replays a capture of wire-capture.ts into a fresh PGlite on this thread and says what PGlite
// spent on each kind of statement: `npx tsx scripts/bench/wire-replay.ts FILE [--skip S] [--until U]
// [--per N] [--longest N]`. The capture holds the server's whole session from its first start (migrations,
// setup, the load), so the replay rebuilds the same data; it times only the calls made between
// the S-th and U-th seconds of the capture (one step of a run: the capacity bench prints when each
// step starts, and the replay prints the capture's length). The messages are handed to PGlite as
// the wire server does (db/embedded-wire.ts: every complete message in one call), one call per
// Sync or Query, so a statement's time is its own: Bind, Execute and Sync, or a simple Query.
// Nothing else runs meanwhile, which makes the figures far steadier than times taken inside a
// loaded server (where PGlite's thread waits for a core), and the pages it touches, the WAL it
// writes and the plans it uses are those of the run.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    skip: { type: 'string', default: '0' },
    until: { type: 'string' },
    per: { type: 'string', default: '1' },
    top: { type: 'string', default: '25' },
    longest: { type: 'string', default: '15' },
  },
});
const file = positionals[0];
if (!file) throw new Error('usage: wire-replay.ts FILE [--skip SECONDS] [--until SECONDS] [--per N] [--top N] [--longest N]');
const capture = readFileSync(file);
const per = Number(values.per);

/** The protocol messages of one capture entry: type byte, then a length that counts itself. */
function* messages(bytes: Buffer): Generator<{ type: string; body: Buffer }> {
  for (let at = 0; at + 5 <= bytes.length;) {
    const length = bytes.readInt32BE(at + 1);
    yield { type: String.fromCharCode(bytes[at] as number), body: bytes.subarray(at + 5, at + 1 + length) };
    at += 1 + length;
  }
}

/**
 * A statement's kind: its first words, whitespace folded (as statements.ts names them), numbers
 * as `?` (the ORM's simple queries carry their values inline).
 */
const kindOf = (text: string) =>
  text
    .replace(/\s+/g, ' ')
    .replace(/\b\d+\b/g, '?')
    .trim()
    .slice(0, 90);
const cString = (body: Buffer, from: number) => body.subarray(from, body.indexOf(0, from)).toString();

const statements = new Map<string, string>();
const calls: Array<{ at: number; bytes: Buffer; kind: string }> = [];
let pending: Buffer[] = [];
let kind = '';
let first: number | undefined;
for (let at = 0; at < capture.length;) {
  const length = capture.readUInt32LE(at);
  const written = capture.readDoubleLE(at + 4);
  const bytes = capture.subarray(at + 12, at + 12 + length);
  at += 12 + length;
  first ??= written;
  pending.push(bytes);
  for (const { type, body } of messages(bytes)) {
    if (type === 'P') {
      const name = cString(body, 0);
      statements.set(name, cString(body, name.length + 1));
      kind ||= kindOf(statements.get(name) ?? '');
    } else if (type === 'B') {
      const portal = cString(body, 0);
      kind ||= kindOf(statements.get(cString(body, portal.length + 1)) ?? '(unknown statement)');
    } else if (type === 'Q') kind = kindOf(cString(body, 0));
    if (type === 'S' || type === 'Q') {
      calls.push({ at: (written - first) / 1000, bytes: Buffer.concat(pending), kind });
      pending = [];
      kind = '';
    }
  }
}

const skip = Number(values.skip);
const until = values.until === undefined ? Infinity : Number(values.until);
const directory = mkdtempSync(path.join(os.tmpdir(), 'palaver-replay-'));
const db = await PGlite.create(directory);
const byKind = new Map<string, { count: number; ms: number }>();
/** PGlite's ms in each 5 s of the capture, to choose --skip and --until (one step of a run). */
const timeline: number[] = [];
let total = 0;
/** The window's longest calls: a stall holds the one connection, so these make a p99, not the sums. */
const longest: Array<{ at: number; ms: number; kind: string }> = [];
try {
  for (const call of calls) {
    const started = performance.now();
    db.execProtocolRawSync(call.bytes);
    const ms = performance.now() - started;
    const slot = Math.floor(call.at / 5);
    timeline[slot] = (timeline[slot] ?? 0) + ms;
    if (call.at < skip || call.at > until) continue;
    total += ms;
    const entry = byKind.get(call.kind) ?? { count: 0, ms: 0 };
    entry.count += 1;
    entry.ms += ms;
    byKind.set(call.kind, entry);
    longest.push({ at: call.at, ms, kind: call.kind });
    if (longest.length > 4 * Number(values.longest)) longest.sort((a, b) => b.ms - a.ms).splice(Number(values.longest));
  }
} finally {
  await db.close();
  rmSync(directory, { recursive: true, force: true });
}

const span = Math.min(until, calls.at(-1)?.at ?? 0) - skip;
console.log(`capture: ${calls.length} calls over ${(calls.at(-1)?.at ?? 0).toFixed(1)} s`);
console.log(`PGlite ms each 5 s of the capture: ${Array.from(timeline, (ms) => Math.round(ms ?? 0)).join(' ')}`);
console.log(
  `replayed from ${skip} s to ${Number.isFinite(until) ? `${until} s` : 'the end'}: PGlite ${total.toFixed(0)} ms ` +
    `(${((total / 1000 / span) * 100).toFixed(0)}% of the window's ${span.toFixed(1)} s)` +
    (per > 1 ? `, ${(total / per).toFixed(3)} ms per ${per}th` : ''),
);
console.log(`${'ms'.padStart(9)} ${'calls'.padStart(7)} ${'mean ms'.padStart(8)}  statement`);
for (const [name, { count, ms }] of [...byKind].sort((a, b) => b[1].ms - a[1].ms).slice(0, Number(values.top))) {
  console.log(
    `${(ms / per).toFixed(per > 1 ? 3 : 0).padStart(9)} ${String(count).padStart(7)} ${(ms / count).toFixed(3).padStart(8)}  ${name}`,
  );
}
console.log(`longest calls (at s, ms):`);
for (const { at, ms, kind: name } of longest.sort((a, b) => b.ms - a.ms).slice(0, Number(values.longest))) {
  console.log(`${at.toFixed(1).padStart(9)} ${ms.toFixed(1).padStart(7)}  ${name}`);
}
