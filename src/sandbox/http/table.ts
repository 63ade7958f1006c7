/**
 * `meta.k8s.io/v1` Table responses, what kubectl asks for (`Accept: application/json;as=Table;…`, negotiated in
 * views.ts) when it prints `kubectl get` output: the usual columns for the common kinds (pods, deployments,
 * services…) and NAME/AGE for the rest. Rows carry the object's metadata as `PartialObjectMetadata` (kube-apiserver's
 * default, `includeObject=Metadata`), nothing (`None`) or the whole object (`Object`).
 */
import type { KindInfo } from '../kinds.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { partialOf } from './views.js';

interface Column {
  name: string;
  type: 'string' | 'integer' | 'date';
  format?: string;
  priority?: number;
  cell: (obj: KubeObject) => unknown;
}

/** Kubernetes' short human duration (`45s`, `3m20s`, `5h`, `12d`). */
function humanAge(from: string | undefined, now = Date.now()): string {
  if (!from) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(from)) / 1000));
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  const d = Math.floor(h / 24);
  if (s < 120) return `${s}s`;
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (h < 3) return `${m}m`;
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  if (d < 2) return `${h}h`;
  if (d < 8) return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
  if (d < 730) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

const rec = (v: unknown): Record<string, unknown> => (isPlainObject(v) ? v : {});
const arr = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

const NAME: Column = { name: 'Name', type: 'string', format: 'name', cell: (o) => o.metadata.name };
const AGE: Column = { name: 'Age', type: 'string', cell: (o) => humanAge(o.metadata.creationTimestamp) };

function containers(o: KubeObject): Record<string, unknown>[] {
  return arr(rec(rec(rec(o.spec).template).spec).containers);
}

function selectorText(o: KubeObject): string {
  const sel = rec(rec(o.spec).selector);
  const labels = isPlainObject(sel.matchLabels) ? sel.matchLabels : sel;
  return (
    Object.entries(labels)
      .filter(([, v]) => typeof v === 'string')
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(',') || '<none>'
  );
}

/** Like kubectl's STATUS: a finished container's reason (Completed, Error) rather than the phase. */
function podStatusText(o: KubeObject): string {
  if (o.metadata.deletionTimestamp) return 'Terminating';
  const terminated = arr(rec(o.status).containerStatuses)
    .map((c) => rec(rec(c.state).terminated))
    .find((t) => typeof t.reason === 'string');
  return String(terminated?.reason ?? rec(o.status).phase ?? 'Pending');
}

function jobStatusText(o: KubeObject): string {
  const done = arr(rec(o.status).conditions).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  return done ? (done.type === 'Complete' ? 'Complete' : 'Failed') : rec(o.spec).suspend === true ? 'Suspended' : 'Running';
}

const COLUMNS: Record<string, Column[]> = {
  '/Pod': [
    NAME,
    {
      name: 'Ready',
      type: 'string',
      cell: (o) => {
        const statuses = arr(rec(o.status).containerStatuses);
        return `${statuses.filter((c) => c.ready === true).length}/${arr(rec(o.spec).containers).length}`;
      },
    },
    { name: 'Status', type: 'string', cell: podStatusText },
    { name: 'Restarts', type: 'integer', cell: (o) => arr(rec(o.status).containerStatuses).reduce((n, c) => n + num(c.restartCount), 0) },
    AGE,
    { name: 'IP', type: 'string', priority: 1, cell: (o) => rec(o.status).podIP ?? '<none>' },
    { name: 'Node', type: 'string', priority: 1, cell: (o) => rec(o.spec).nodeName ?? '<none>' },
  ],
  'apps/Deployment': [
    NAME,
    { name: 'Ready', type: 'string', cell: (o) => `${num(rec(o.status).readyReplicas)}/${num(rec(o.spec).replicas ?? 1)}` },
    { name: 'Up-to-date', type: 'integer', cell: (o) => num(rec(o.status).updatedReplicas) },
    { name: 'Available', type: 'integer', cell: (o) => num(rec(o.status).availableReplicas) },
    AGE,
    {
      name: 'Containers',
      type: 'string',
      priority: 1,
      cell: (o) =>
        containers(o)
          .map((c) => c.name)
          .join(','),
    },
    {
      name: 'Images',
      type: 'string',
      priority: 1,
      cell: (o) =>
        containers(o)
          .map((c) => c.image)
          .join(','),
    },
    { name: 'Selector', type: 'string', priority: 1, cell: selectorText },
  ],
  'apps/ReplicaSet': [
    NAME,
    { name: 'Desired', type: 'integer', cell: (o) => num(rec(o.spec).replicas ?? 1) },
    { name: 'Current', type: 'integer', cell: (o) => num(rec(o.status).replicas) },
    { name: 'Ready', type: 'integer', cell: (o) => num(rec(o.status).readyReplicas) },
    AGE,
    {
      name: 'Containers',
      type: 'string',
      priority: 1,
      cell: (o) =>
        containers(o)
          .map((c) => c.name)
          .join(','),
    },
    {
      name: 'Images',
      type: 'string',
      priority: 1,
      cell: (o) =>
        containers(o)
          .map((c) => c.image)
          .join(','),
    },
    { name: 'Selector', type: 'string', priority: 1, cell: selectorText },
  ],
  '/Service': [
    NAME,
    { name: 'Type', type: 'string', cell: (o) => rec(o.spec).type ?? 'ClusterIP' },
    { name: 'Cluster-IP', type: 'string', cell: (o) => rec(o.spec).clusterIP ?? '<none>' },
    {
      name: 'External-IP',
      type: 'string',
      cell: (o) =>
        arr(rec(rec(o.status).loadBalancer).ingress)
          .map((i) => i.ip ?? i.hostname)
          .join(',') || '<none>',
    },
    {
      name: 'Port(s)',
      type: 'string',
      cell: (o) =>
        arr(rec(o.spec).ports)
          .map((p) => `${String(p.port)}/${String(p.protocol ?? 'TCP')}`)
          .join(',') || '<none>',
    },
    AGE,
    { name: 'Selector', type: 'string', priority: 1, cell: selectorText },
  ],
  'apps/StatefulSet': [
    NAME,
    { name: 'Ready', type: 'string', cell: (o) => `${num(rec(o.status).readyReplicas)}/${num(rec(o.spec).replicas ?? 1)}` },
    AGE,
  ],
  'apps/DaemonSet': [
    NAME,
    { name: 'Desired', type: 'integer', cell: (o) => num(rec(o.status).desiredNumberScheduled) },
    { name: 'Current', type: 'integer', cell: (o) => num(rec(o.status).currentNumberScheduled) },
    { name: 'Ready', type: 'integer', cell: (o) => num(rec(o.status).numberReady) },
    { name: 'Up-to-date', type: 'integer', cell: (o) => num(rec(o.status).updatedNumberScheduled) },
    { name: 'Available', type: 'integer', cell: (o) => num(rec(o.status).numberAvailable) },
    AGE,
  ],
  'batch/Job': [
    NAME,
    { name: 'Status', type: 'string', cell: jobStatusText },
    { name: 'Completions', type: 'string', cell: (o) => `${num(rec(o.status).succeeded)}/${num(rec(o.spec).completions ?? 1)}` },
    AGE,
  ],
  '/Event': [
    {
      name: 'Last Seen',
      type: 'string',
      cell: (o) => humanAge(typeof o.lastTimestamp === 'string' ? o.lastTimestamp : o.metadata.creationTimestamp),
    },
    { name: 'Type', type: 'string', cell: (o) => o.type ?? 'Normal' },
    { name: 'Reason', type: 'string', cell: (o) => o.reason ?? '' },
    {
      name: 'Object',
      type: 'string',
      cell: (o) => `${String(rec(o.involvedObject).kind ?? '').toLowerCase()}/${String(rec(o.involvedObject).name ?? '')}`,
    },
    { name: 'Message', type: 'string', cell: (o) => o.message ?? '' },
  ],
  '/Namespace': [
    NAME,
    {
      name: 'Status',
      type: 'string',
      cell: (o) => (o.metadata.deletionTimestamp ? 'Terminating' : String(rec(o.status).phase ?? 'Active')),
    },
    AGE,
  ],
  '/ConfigMap': [
    NAME,
    { name: 'Data', type: 'integer', cell: (o) => Object.keys(rec(o.data)).length + Object.keys(rec(o.binaryData)).length },
    AGE,
  ],
  '/Secret': [
    NAME,
    { name: 'Type', type: 'string', cell: (o) => o.type ?? 'Opaque' },
    { name: 'Data', type: 'integer', cell: (o) => Object.keys(rec(o.data)).length },
    AGE,
  ],
  '/Endpoints': [
    NAME,
    {
      name: 'Endpoints',
      type: 'string',
      cell: (o) => {
        const eps = arr(o.subsets).flatMap((s) =>
          arr(s.addresses).flatMap((a) => arr(s.ports).map((p) => `${String(a.ip)}:${String(p.port)}`)),
        );
        return eps.length === 0 ? '<none>' : eps.length > 3 ? `${eps.slice(0, 3).join(',')} + ${eps.length - 3} more...` : eps.join(',');
      },
    },
    AGE,
  ],
};

/** Builds a Table for objects of one kind. `includeObject`: None, Metadata (default) or Object (views.ts checks it). */
export function tableOf(
  info: KindInfo,
  items: KubeObject[],
  listMeta: Record<string, unknown>,
  includeObject: string | null,
  apiVersion: string,
): Record<string, unknown> {
  const columns = COLUMNS[`${info.group}/${info.kind}`] ?? [NAME, AGE];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: '',
      priority: c.priority ?? 0,
    })),
    rows: items.map((obj) => {
      const row: Record<string, unknown> = { cells: columns.map((c) => c.cell(obj)) };
      if (includeObject === 'Object') row.object = { ...obj, apiVersion };
      else if (includeObject !== 'None') row.object = partialOf(obj);
      return row;
    }),
  };
}
