/**
 * The agent-footprint baseline: a bare `@kubernetes/client-node` caching informer on ConfigMaps in every namespace —
 * what an agent built on client-node's informer would hold (every whole object, in memory). The agent's memory per
 * watched object is reported next to this one's, measured on the same sandbox in the same run.
 *
 *   node --import tsx bench/baselines/informer.ts --kubeconfig FILE
 *     → {"event":"ready","objects":N,"seconds":S} once the initial list is in the cache
 */
import { parseArgs } from 'node:util';
import { CoreV1Api, KubeConfig, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';

const { values } = parseArgs({ options: { kubeconfig: { type: 'string' } } });
if (!values.kubeconfig) {
  console.error('usage: informer.ts --kubeconfig FILE');
  process.exit(2);
}
const kc = new KubeConfig();
kc.loadFromFile(values.kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/configmaps', () => core.listConfigMapForAllNamespaces());
informer.on('error', (err: unknown) => {
  process.stdout.write(`${JSON.stringify({ event: 'error', error: String((err as Error)?.message ?? err) })}\n`);
  process.exit(1);
});
process.on('SIGTERM', () => process.exit(0));
const started = performance.now();
// start() resolves once the list is in the cache and the watch is open.
await informer.start();
process.stdout.write(
  `${JSON.stringify({ event: 'ready', objects: informer.list().length, seconds: (performance.now() - started) / 1000 })}\n`,
);
