/**
 * Seed data: `demo` (what `outpost demo` shows: a web app in namespace `demo` and a small backend in
 * `demo-backend`) and `scale` (N ConfigMaps spread over ten namespaces, created directly in the store for
 * benchmarks).
 */
import type { ObjectStore } from './store.js';

/** Seed choice, as in SandboxOptions. */
export type SeedOption = 'none' | 'demo' | { scale: number };

/** Parses `none`, `demo` or `scale:N` (CLI form). */
export function parseSeed(text: string): SeedOption {
  if (text === 'none' || text === 'demo') return text;
  const match = /^scale:(\d+)$/.exec(text);
  if (match) return { scale: Number(match[1]) };
  throw new Error(`invalid seed "${text}": expected none, demo or scale:N`);
}

function deployment(namespace: string, name: string, replicas: number, image: string, port: number): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name, image, ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }] }] },
      },
    },
  };
}

function service(namespace: string, name: string, port: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { app: name } },
    spec: { selector: { app: name }, ports: [{ name: 'http', port, targetPort: 'http', protocol: 'TCP' }], type: 'ClusterIP' },
  };
}

/** Creates the demo objects. */
function seedDemo(store: ObjectStore): void {
  const create = (obj: Record<string, unknown>) => store.create(store.kindOf(obj.apiVersion, obj.kind), obj);
  for (const ns of ['demo', 'demo-backend']) {
    create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns, labels: { 'kubernetes.io/metadata.name': ns } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
  }
  create(deployment('demo', 'web', 3, 'nginx:1.27-alpine', 80));
  create(service('demo', 'web', 80));
  create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'web-config', namespace: 'demo', labels: { app: 'web' } },
    data: { LOG_LEVEL: 'info', 'index.html': '<h1>Hello from the Outpost sandbox</h1>\n' },
  });
  create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'web-secret', namespace: 'demo', labels: { app: 'web' } },
    type: 'Opaque',
    data: { password: Buffer.from('s3cr3t-demo').toString('base64') },
  });
  create(deployment('demo-backend', 'api', 2, 'ghcr.io/outpost-demo/api:1.0.0', 8080));
  create(service('demo-backend', 'api', 8080));
  create(deployment('demo-backend', 'worker', 1, 'ghcr.io/outpost-demo/worker:1.0.0', 9090));
  create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'api-config', namespace: 'demo-backend' },
    data: { DATABASE_HOST: 'db.demo-backend.svc', QUEUE: 'jobs' },
  });
}

/** Namespaces used by the scale seed. */
const SCALE_NAMESPACES = Array.from({ length: 10 }, (_, i) => `scale-${i}`);

/** Creates `count` ConfigMaps spread over {@link SCALE_NAMESPACES}. */
function seedScale(store: ObjectStore, count: number): void {
  const nsInfo = store.registry.byKindKey('/Namespace')!;
  const cmInfo = store.registry.byKindKey('/ConfigMap')!;
  for (const ns of SCALE_NAMESPACES) {
    if (!store.peek(nsInfo, undefined, ns)) store.create(nsInfo, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }
  for (let i = 0; i < count; i++) {
    const ns = SCALE_NAMESPACES[i % SCALE_NAMESPACES.length]!;
    store.create(cmInfo, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${String(i).padStart(6, '0')}`, namespace: ns, labels: { seed: 'scale', shard: String(i % 16) } },
      data: { index: String(i), payload: 'x'.repeat(64) },
    });
  }
}

/** Applies a seed option. */
export function applySeed(store: ObjectStore, seed: SeedOption): void {
  if (seed === 'none') return;
  if (seed === 'demo') seedDemo(store);
  else seedScale(store, seed.scale);
}
