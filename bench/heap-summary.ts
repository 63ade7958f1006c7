/**
 * Investigation helper: summarises a V8 heap snapshot by constructor (self size, count), or the difference between
 * two (B − A): `node --import tsx bench/heap-summary.ts A.heapsnapshot [B.heapsnapshot] [--top 40]`.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: (string | string[])[] } };
  nodes: number[];
  strings: string[];
}

function summarise(file: string): Map<string, { size: number; count: number }> {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0] as string[];
  const n = fields.length;
  const [iType, iName, iSize] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const out = new Map<string, { size: number; count: number }>();
  for (let i = 0; i < s.nodes.length; i += n) {
    const type = types[s.nodes[i + iType]!]!;
    const name =
      type === 'object' || type === 'closure' || type === 'native' || type === 'hidden' ? s.strings[s.nodes[i + iName]!]!.slice(0, 60) : '';
    const key = `${type}:${name}`;
    const e = out.get(key) ?? { size: 0, count: 0 };
    e.size += s.nodes[i + iSize]!;
    e.count++;
    out.set(key, e);
  }
  return out;
}

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 40;
const files = args.filter((a, i) => !a.startsWith('--') && (topAt < 0 || i !== topAt + 1));
const a = summarise(files[0]!);
const b = files[1] ? summarise(files[1]) : undefined;
const rows = [...new Set([...a.keys(), ...(b?.keys() ?? [])])].map((k) => {
  const x = a.get(k) ?? { size: 0, count: 0 };
  const y = b?.get(k) ?? { size: 0, count: 0 };
  return b ? { k, size: y.size - x.size, count: y.count - x.count } : { k, size: x.size, count: x.count };
});
rows.sort((p, q) => Math.abs(q.size) - Math.abs(p.size));
const total = rows.reduce((t, r) => t + r.size, 0);
console.log(`total ${b ? 'delta ' : ''}self size ${(total / 2 ** 20).toFixed(2)} MiB`);
for (const r of rows.slice(0, top)) console.log(`${String(r.size).padStart(12)} ${String(r.count).padStart(9)}  ${r.k}`);
