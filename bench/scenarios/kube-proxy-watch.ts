/**
 * The watch half of the kube-proxy scenario: one `?watch=1` on the ConfigMaps of a namespace straight to the sandbox,
 * one through two bare relay processes (baseline) and one through the gateway, open at the same time; a ConfigMap updated in the sandbox's store N times, spaced; for
 * each update, the time from just before the write to its event arriving on each watch (both in this process, one
 * clock).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxStore } from '../../src/sandbox/index.js';
import { rawWatch, type KubeTarget, type RawWatch } from '../kube-clients.js';
import { summarize } from '../machine.js';
import type { Side } from './kube-proxy.js';

const SIDES: readonly Side[] = ['direct', 'relay', 'gateway'];

/** What {@link measureWatches} needs. */
export interface WatchOptions {
  store: SandboxStore;
  namespace: string;
  targets: Record<Side, KubeTarget>;
  changes: number;
  spacingMs: number;
  /** Unmeasured changes first, each awaited on both watches (default 3). */
  warmup?: number;
}

/** Write → event latencies of both watches (milliseconds). */
export interface WatchResult {
  changes: number;
  /** Changes a watch had not received 10 s after the last write (left out of its percentiles). */
  missed: Record<Side, number>;
  direct: ReturnType<typeof summarize>;
  /** Through two bare relay processes: the floor of the process hops. */
  relay: ReturnType<typeof summarize>;
  gateway: ReturnType<typeof summarize>;
  /** gateway / direct, percentile by percentile. */
  ratio: { p50: number; p99: number };
}

const NAME = 'watched';

/** Opens both watches, makes the changes and times them; closes the watches whatever happens. */
export async function measureWatches(o: WatchOptions): Promise<WatchResult> {
  const { store, namespace } = o;
  store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: NAME, namespace }, data: { n: 'start' } });
  const path = `/api/v1/namespaces/${namespace}/configmaps?watch=1&resourceVersion=${store.resourceVersion}`;
  const seen = Object.fromEntries(SIDES.map((side) => [side, new Map<string, number>()])) as Record<Side, Map<string, number>>;
  const watches: RawWatch[] = [];
  try {
    for (const side of SIDES) {
      watches.push(
        rawWatch(o.targets[side], path, (event, at) => {
          const n = event.object.data?.n;
          if (event.object.metadata?.name === NAME && n !== undefined && !seen[side].has(n)) seen[side].set(n, at);
        }),
      );
    }
    await Promise.all(watches.map((w) => w.opened));
    const write = (n: string) => {
      const current = store.get('v1', 'ConfigMap', namespace, NAME)!;
      const at = performance.now();
      store.update({ ...current, data: { n } });
      return at;
    };
    const allSeen = (n: string) => SIDES.every((side) => seen[side].has(n));
    for (let i = 0; i < (o.warmup ?? 3); i++) {
      const n = `warmup-${i}`;
      write(n);
      const deadline = performance.now() + 10_000;
      while (!allSeen(n)) {
        if (performance.now() > deadline) throw new Error(`warm-up change ${n} did not reach every watch within 10 s`);
        await sleep(5);
      }
      await sleep(o.spacingMs);
    }
    const written: number[] = [];
    for (let i = 0; i < o.changes; i++) {
      written.push(write(String(i)));
      await sleep(o.spacingMs);
    }
    const deadline = performance.now() + 10_000;
    while (!written.every((_, i) => allSeen(String(i))) && performance.now() < deadline) await sleep(10);
    const latencies = (side: Side) =>
      written.flatMap((at, i) => {
        const arrived = seen[side].get(String(i));
        return arrived === undefined ? [] : [arrived - at];
      });
    const direct = summarize(latencies('direct'));
    const relay = summarize(latencies('relay'));
    const gateway = summarize(latencies('gateway'));
    return {
      changes: o.changes,
      missed: { direct: o.changes - direct.n, relay: o.changes - relay.n, gateway: o.changes - gateway.n },
      direct,
      relay,
      gateway,
      ratio: { p50: gateway.p50 / direct.p50, p99: gateway.p99 / direct.p99 },
    };
  } finally {
    for (const w of watches) w.close();
  }
}
