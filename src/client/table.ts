/**
 * `kubectl get`-style tables: NAME plus a few per-kind columns, AGE last; `-o wide` adds more. Columns are computed
 * from the objects the agent returned (built-in kinds the CLI knows; NAME/AGE for everything else).
 */
import type { JsonObject, JsonValue } from '@bufbuild/protobuf';
import { formatDuration } from './duration.js';
import { renderRows } from './text-table.js';

type Obj = JsonObject;
type Column = [header: string, value: (o: Obj) => string];

const get = (o: JsonValue | undefined, ...path: string[]): JsonValue | undefined => {
  let cur: JsonValue | undefined = o;
  for (const key of path) {
    if (!cur || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as JsonObject)[key];
  }
  return cur;
};
const str = (v: JsonValue | undefined, fallback = '<none>'): string => (v === undefined || v === null || v === '' ? fallback : String(v));
const num = (v: JsonValue | undefined): number => (typeof v === 'number' ? v : 0);
const arr = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);

/** AGE column: time since metadata.creationTimestamp. */
function age(o: Obj, now = Date.now()): string {
  const ts = get(o, 'metadata', 'creationTimestamp');
  const t = typeof ts === 'string' ? Date.parse(ts) : NaN;
  return Number.isFinite(t) ? formatDuration(Math.max(now - t, 0)) : '<unknown>';
}

const images = (o: Obj, ...path: string[]) =>
  arr(get(o, ...path, 'containers'))
    .map((c) => str(get(c, 'image'), ''))
    .join(',') || '<none>';
const selector = (o: Obj) => {
  const labels = get(o, 'spec', 'selector', 'matchLabels');
  return labels && typeof labels === 'object' && !Array.isArray(labels)
    ? Object.entries(labels)
        .map(([k, v]) => `${k}=${str(v, '')}`)
        .join(',') || '<none>'
    : '<none>';
};

function podColumns(wide: boolean): Column[] {
  const cols: Column[] = [
    [
      'READY',
      (o) => {
        const statuses = arr(get(o, 'status', 'containerStatuses'));
        const total = arr(get(o, 'spec', 'containers')).length;
        return `${statuses.filter((s) => get(s, 'ready') === true).length}/${total}`;
      },
    ],
    ['STATUS', (o) => str(get(o, 'status', 'phase'), 'Unknown')],
    ['RESTARTS', (o) => String(arr(get(o, 'status', 'containerStatuses')).reduce<number>((n, s) => n + num(get(s, 'restartCount')), 0))],
  ];
  if (wide) cols.push(['IP', (o) => str(get(o, 'status', 'podIP'))], ['NODE', (o) => str(get(o, 'spec', 'nodeName'))]);
  return cols;
}

function columnsFor(kind: string, wide: boolean): Column[] {
  switch (kind) {
    case 'Pod':
      return podColumns(wide);
    case 'Deployment':
      return [
        ['READY', (o) => `${num(get(o, 'status', 'readyReplicas'))}/${num(get(o, 'spec', 'replicas'))}`],
        ['UP-TO-DATE', (o) => String(num(get(o, 'status', 'updatedReplicas')))],
        ['AVAILABLE', (o) => String(num(get(o, 'status', 'availableReplicas')))],
        ...(wide
          ? ([
              ['IMAGES', (o) => images(o, 'spec', 'template', 'spec')],
              ['SELECTOR', selector],
            ] as Column[])
          : []),
      ];
    case 'ReplicaSet':
    case 'StatefulSet':
      return [
        ['DESIRED', (o) => String(num(get(o, 'spec', 'replicas')))],
        ['CURRENT', (o) => String(num(get(o, 'status', 'replicas')))],
        ['READY', (o) => String(num(get(o, 'status', 'readyReplicas')))],
        ...(wide ? ([['IMAGES', (o) => images(o, 'spec', 'template', 'spec')]] as Column[]) : []),
      ];
    case 'Service':
      return [
        ['TYPE', (o) => str(get(o, 'spec', 'type'), 'ClusterIP')],
        ['CLUSTER-IP', (o) => str(get(o, 'spec', 'clusterIP'))],
        [
          'PORT(S)',
          (o) =>
            arr(get(o, 'spec', 'ports'))
              .map((p) => `${str(get(p, 'port'), '')}/${str(get(p, 'protocol'), 'TCP')}`)
              .join(',') || '<none>',
        ],
        ...(wide
          ? ([
              [
                'SELECTOR',
                (o) => {
                  const s = get(o, 'spec', 'selector');
                  return s && typeof s === 'object' && !Array.isArray(s)
                    ? Object.entries(s)
                        .map(([k, v]) => `${k}=${str(v, '')}`)
                        .join(',')
                    : '<none>';
                },
              ],
            ] as Column[])
          : []),
      ];
    case 'ConfigMap':
      return [
        [
          'DATA',
          (o) => {
            const d = get(o, 'data');
            const b = get(o, 'binaryData');
            const count = (v: JsonValue | undefined) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).length : 0);
            return String(count(d) + count(b));
          },
        ],
      ];
    case 'Secret':
      return [['TYPE', (o) => str(get(o, 'type'), 'Opaque')]];
    case 'Namespace':
      return [['STATUS', (o) => str(get(o, 'status', 'phase'), 'Active')]];
    default:
      return [];
  }
}

/**
 * Renders objects as a kubectl-style table (two spaces between columns). `withNamespace` adds a NAMESPACE column
 * first (all-namespaces listings). Returns "No resources found" text for an empty list.
 */
export function renderTable(objects: Obj[], options: { kind: string; wide?: boolean; withNamespace?: boolean; now?: number }): string {
  const cols: Column[] = [
    ...(options.withNamespace ? ([['NAMESPACE', (o) => str(get(o, 'metadata', 'namespace'), '')]] as Column[]) : []),
    ['NAME', (o) => str(get(o, 'metadata', 'name'), '')],
    ...columnsFor(options.kind, options.wide ?? false),
    ['AGE', (o) => age(o, options.now)],
  ];
  return renderRows(
    cols.map(([h]) => h),
    objects.map((o) => cols.map(([, f]) => f(o))),
  );
}
