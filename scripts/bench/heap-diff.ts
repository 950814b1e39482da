// `tsx scripts/bench/heap-diff.ts before.heapsnapshot after.heapsnapshot [per]`: what grew
// between two heap snapshots, by kind of object (type and constructor name), with the growth in
// bytes and count, divided by `per` (e.g. the conversations added between them) when given.
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

function totals(file: string): Map<string, { bytes: number; count: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const [types] = snap.snapshot.meta.node_types;
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const out = new Map<string, { bytes: number; count: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt] ?? 0] ?? '?';
    const rawName = snap.strings[snap.nodes[i + nameAt] ?? 0] ?? '';
    // Strings and code are grouped by type; objects by constructor.
    const name = type === 'object' || type === 'closure' || type === 'native' ? rawName.slice(0, 60) : '';
    const key = `${type} ${name}`;
    const entry = out.get(key) ?? { bytes: 0, count: 0 };
    entry.bytes += snap.nodes[i + sizeAt] ?? 0;
    entry.count += 1;
    out.set(key, entry);
  }
  return out;
}

const [beforeFile, afterFile, perArg] = process.argv.slice(2);
if (!beforeFile || !afterFile) throw new Error('usage: heap-diff.ts before.heapsnapshot after.heapsnapshot [per]');
const per = Number(perArg ?? 1) || 1;
const before = totals(beforeFile);
const after = totals(afterFile);
const rows = [...after].map(([key, a]) => {
  const b = before.get(key) ?? { bytes: 0, count: 0 };
  return { key, bytes: (a.bytes - b.bytes) / per, count: (a.count - b.count) / per };
});
rows.sort((x, y) => y.bytes - x.bytes);
const total = rows.reduce((sum, r) => sum + r.bytes, 0);
process.stdout.write(`total growth ${Math.round(total)} B${per > 1 ? ' each' : ''}\n`);
for (const row of rows.slice(0, 40)) {
  process.stdout.write(`${Math.round(row.bytes).toString().padStart(10)} B ${row.count.toFixed(2).padStart(9)}  ${row.key}\n`);
}
