/**
 * Sandbox list/watch benchmark (not a test): seeds N ConfigMaps, lists them over HTTP (paged like an informer, and in
 * one response), then streams M watch events to one or more HTTP watchers and reports events per second end to end.
 *
 *   node --import tsx bench/sandbox-list-watch.ts [--objects 100000] [--events 50000] [--watchers 1] [--page 500]
 */
import { request } from 'node:http';
import { parseArgs } from 'node:util';
import { startSandbox, type Sandbox } from '../src/sandbox/index.js';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '100000' },
    events: { type: 'string', default: '50000' },
    watchers: { type: 'string', default: '1' },
    page: { type: 'string', default: '500' },
  },
});
const objects = Number(values.objects);
const eventCount = Number(values.events);
const watchers = Number(values.watchers);
const pageSize = Number(values.page);
for (const [name, n] of Object.entries({ objects, events: eventCount, watchers, page: pageSize })) {
  if (!Number.isInteger(n) || n <= 0) {
    console.error(`--${name} must be a positive integer`);
    process.exit(2);
  }
}

function get(sb: Sandbox, path: string): Promise<{ status: number; bytes: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, sb.url), { headers: { Authorization: `Bearer ${sb.adminToken}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, bytes: buf.length, body: buf.toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a watch and resolves `done` when `expected` events have been parsed. */
function watch(sb: Sandbox, rv: string, expected: number): Promise<{ done: Promise<number>; close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(`/api/v1/configmaps?watch=true&resourceVersion=${rv}`, sb.url),
      { headers: { Authorization: `Bearer ${sb.adminToken}` } },
      (res) => {
        let seen = 0;
        let rest = '';
        let finish!: (t: number) => void;
        const done = new Promise<number>((r) => (finish = r));
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const text = rest + chunk;
          const lines = text.split('\n');
          rest = lines.pop()!;
          for (const line of lines) {
            if (!line) continue;
            JSON.parse(line);
            seen++;
          }
          if (seen >= expected) finish(performance.now());
        });
        resolve({ done, close: () => req.destroy() });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const sb = await startSandbox({ historyWindow: Math.max(10000, eventCount + 10), bookmarkIntervalMs: 60000 });
try {
  let t0 = performance.now();
  // in-process creates, as `--seed scale:N` does (one namespace here so the list is one contiguous range)
  for (let i = 0; i < objects; i++) {
    sb.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${String(i).padStart(6, '0')}`, namespace: 'default', labels: { seed: 'bench' } },
      data: { index: String(i), payload: 'x'.repeat(64) },
    });
  }
  const seedMs = performance.now() - t0;
  console.log(`seed: ${objects} ConfigMaps in ${seedMs.toFixed(0)} ms (${Math.round(objects / (seedMs / 1000))} objects/s)`);

  t0 = performance.now();
  let listed = 0;
  let bytes = 0;
  let cont = '';
  let pages = 0;
  do {
    const res = await get(sb, `/api/v1/configmaps?limit=${pageSize}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    const doc = JSON.parse(res.body) as { items: unknown[]; metadata: { continue?: string } };
    listed += doc.items.length;
    bytes += res.bytes;
    cont = doc.metadata.continue ?? '';
    pages++;
  } while (cont);
  let ms = performance.now() - t0;
  console.log(
    `paged list: ${listed} objects in ${pages} pages of ${pageSize}, ${(bytes / 1e6).toFixed(1)} MB in ${ms.toFixed(0)} ms (${Math.round(listed / (ms / 1000))} objects/s)`,
  );

  t0 = performance.now();
  const whole = await get(sb, '/api/v1/configmaps');
  ms = performance.now() - t0;
  console.log(`single list: ${(whole.bytes / 1e6).toFixed(1)} MB in ${ms.toFixed(0)} ms (${Math.round(objects / (ms / 1000))} objects/s)`);

  const rv = String(sb.store.resourceVersion);
  const streams = await Promise.all(Array.from({ length: watchers }, () => watch(sb, rv, eventCount)));
  const names = sb.store
    .list('v1', 'ConfigMap', 'default')
    .slice(0, eventCount)
    .map((o) => o.metadata.name!);
  t0 = performance.now();
  // produce events in slices so the event loop can flush sockets in between
  let produced = 0;
  while (produced < eventCount) {
    const end = Math.min(eventCount, produced + 2000);
    for (; produced < end; produced++) {
      const name = names[produced % names.length]!;
      const cur = sb.store.get('v1', 'ConfigMap', 'default', name)!;
      sb.store.update({ ...cur, data: { ...(cur.data as object), rev: String(produced) } });
    }
    await new Promise((r) => setImmediate(r));
  }
  const produceMs = performance.now() - t0;
  const finished = await Promise.all(streams.map((s) => s.done));
  const totalMs = Math.max(...finished) - t0;
  for (const s of streams) s.close();
  console.log(
    `watch: ${eventCount} events produced in ${produceMs.toFixed(0)} ms; delivered to ${watchers} watcher(s) in ${totalMs.toFixed(0)} ms`,
  );
  console.log(
    `watch throughput: ${Math.round(eventCount / (totalMs / 1000))} events/s per watcher, ${Math.round((eventCount * watchers) / (totalMs / 1000))} events/s total`,
  );
} finally {
  await sb.close();
}
