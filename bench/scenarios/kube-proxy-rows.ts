/**
 * Table rows of the kube-proxy scenario (bench/scenarios/kube-proxy.ts): each side's percentiles, the gateway's
 * overhead over the direct request, and the watch ratio, with the targets (proxy overhead p99 ≤ 10 ms, watch latency
 * within 2× of direct).
 */
import { figureRow, type Row } from '../rows.js';
import type { KubeProxyResult } from './kube-proxy.js';

/**
 * The rows of the runs (each run's percentiles; a row shows their median over the runs); `judged` false (a --quick
 * run) leaves the targets unjudged.
 */
export function kubeProxyRows(runs: KubeProxyResult[], judged = true): Row[] {
  const [r] = runs;
  if (!r) return [];
  const each = (f: (run: KubeProxyResult) => number) => runs.map(f);
  const g = `kube-proxy: GET ${r.path} (keep-alive, ${r.get.direct.n} per side)`;
  const w = `kube-proxy: watch ConfigMaps, write → event (${r.watch.changes} changes)`;
  const ms = { digits: 2 };
  const rows = [
    figureRow(
      g,
      'direct to the cluster, p50 ms',
      each((x) => x.get.direct.p50),
      ms,
    ),
    figureRow(
      g,
      'direct to the cluster, p99 ms',
      each((x) => x.get.direct.p99),
      ms,
    ),
    figureRow(
      g,
      'two bare Node relay processes (baseline), p50 ms',
      each((x) => x.get.relay.p50),
      ms,
    ),
    figureRow(
      g,
      'two bare Node relay processes (baseline), p99 ms',
      each((x) => x.get.relay.p99),
      ms,
    ),
    figureRow(
      g,
      'through the gateway (/k8s/ACCOUNT), p50 ms',
      each((x) => x.get.gateway.p50),
      ms,
    ),
    figureRow(
      g,
      'through the gateway (/k8s/ACCOUNT), p99 ms',
      each((x) => x.get.gateway.p99),
      ms,
    ),
    figureRow(
      g,
      'overhead = gateway − direct, p50 ms',
      each((x) => x.get.overhead.p50),
      ms,
    ),
    figureRow(
      g,
      'overhead = gateway − direct, p99 ms',
      each((x) => x.get.overhead.p99),
      {
        ...ms,
        target: 'p99 ≤ 10 ms',
        meets: (m) => m <= 10,
        judged,
      },
    ),
    figureRow(
      g,
      'gateway − bare relays, p50 ms (what Outpost adds to the hops)',
      each((x) => x.get.gateway.p50 - x.get.relay.p50),
      ms,
    ),
  ];
  if (runs.every((x) => x.kubectl)) {
    const k = `kube-proxy: kubectl get pods -n demo (${r.kubectl!.version}, ${r.kubectl!.direct.n} processes per side)`;
    rows.push(
      figureRow(
        k,
        'direct to the cluster, p50 ms',
        each((x) => x.kubectl!.direct.p50),
        { digits: 0 },
      ),
      figureRow(
        k,
        'direct to the cluster, p99 ms',
        each((x) => x.kubectl!.direct.p99),
        { digits: 0 },
      ),
      figureRow(
        k,
        'through the gateway, p50 ms',
        each((x) => x.kubectl!.gateway.p50),
        { digits: 0 },
      ),
      figureRow(
        k,
        'through the gateway, p99 ms',
        each((x) => x.kubectl!.gateway.p99),
        { digits: 0 },
      ),
    );
  }
  const missed = runs.reduce((sum, x) => sum + x.watch.missed.direct + x.watch.missed.relay + x.watch.missed.gateway, 0);
  rows.push(
    figureRow(
      w,
      'direct to the cluster, p50 ms',
      each((x) => x.watch.direct.p50),
      ms,
    ),
    figureRow(
      w,
      'direct to the cluster, p99 ms',
      each((x) => x.watch.direct.p99),
      ms,
    ),
    figureRow(
      w,
      'two bare Node relay processes (baseline), p50 ms',
      each((x) => x.watch.relay.p50),
      ms,
    ),
    figureRow(
      w,
      'two bare Node relay processes (baseline), p99 ms',
      each((x) => x.watch.relay.p99),
      ms,
    ),
    figureRow(
      w,
      'through the gateway, p50 ms',
      each((x) => x.watch.gateway.p50),
      ms,
    ),
    figureRow(
      w,
      `through the gateway, p99 ms (${missed} missed)`,
      each((x) => x.watch.gateway.p99),
      ms,
    ),
    figureRow(
      w,
      'ratio gateway / direct, p50',
      each((x) => x.watch.ratio.p50),
      ms,
    ),
    figureRow(
      w,
      'ratio gateway / direct, p99',
      each((x) => (x.watch.missed.direct + x.watch.missed.relay + x.watch.missed.gateway === 0 ? x.watch.ratio.p99 : NaN)),
      {
        ...ms,
        target: '≤ 2 (within 2× of direct)',
        meets: (m) => m <= 2,
        judged,
      },
    ),
    figureRow(
      w,
      'ratio gateway / bare relays, p50',
      each((x) => x.watch.gateway.p50 / x.watch.relay.p50),
      ms,
    ),
  );
  return rows;
}
