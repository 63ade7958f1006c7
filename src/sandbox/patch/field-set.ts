/**
 * Field sets for server-side apply: which fields of an object a manager owns, in the `FieldsV1` vocabulary of
 * `metadata.managedFields` (`f:<field>`, `k:{"name":"web"}` for list items merged by key, `v:<json>` for members of
 * primitive sets, `.` for "the item itself"). A set is kept as JSON-encoded paths so it can be compared cheaply.
 */
import { isObject } from './errors.js';
import type { FieldPatchMeta, TypeSchema } from './schema.js';
import { jsonEqual } from './strategic-merge.js';

/** One path of FieldsV1 keys, e.g. `["f:spec","f:template","f:spec","f:containers",'k:{"name":"web"}',"f:image"]`. */
export type FieldPath = string[];

/** A set of owned paths, keyed by `JSON.stringify(path)`. */
export type FieldSet = Map<string, FieldPath>;

/** Fields that identify the object rather than configure it; never owned by a manager. */
const ROOT_IGNORED = new Set(['apiVersion', 'kind']);
const META_IGNORED = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

export function pathKey(path: FieldPath): string {
  return JSON.stringify(path);
}

function add(set: FieldSet, path: FieldPath): void {
  set.set(pathKey(path), path);
}

function walkObject(obj: Record<string, unknown>, schema: TypeSchema | undefined, path: FieldPath, out: FieldSet): void {
  for (const [k, v] of Object.entries(obj)) {
    if (v === null || v === undefined) continue;
    if (path.length === 0 && ROOT_IGNORED.has(k)) continue;
    if (path.length === 1 && path[0] === 'f:metadata' && META_IGNORED.has(k)) continue;
    walkValue(v, schema?.[k], [...path, `f:${k}`], out);
  }
}

function walkValue(v: unknown, meta: FieldPatchMeta | undefined, path: FieldPath, out: FieldSet): void {
  if (isObject(v)) {
    if (Object.keys(v).length === 0 || meta?.strategy === 'replace') add(out, path);
    else walkObject(v, meta?.schema, path, out);
    return;
  }
  if (Array.isArray(v) && meta?.strategy === 'merge') {
    const mk = meta.mergeKey;
    if (mk && v.every((el) => isObject(el) && el[mk] !== undefined && el[mk] !== null)) {
      for (const el of v as Record<string, unknown>[]) {
        const itemPath = [...path, `k:${JSON.stringify({ [mk]: el[mk] })}`];
        add(out, itemPath);
        walkObject(el, meta.schema, itemPath, out);
      }
      return;
    }
    if (!mk && v.every((el) => !isObject(el) && !Array.isArray(el))) {
      for (const el of v) add(out, [...path, `v:${JSON.stringify(el)}`]);
      return;
    }
  }
  add(out, path); // scalar or atomic list
}

/** The set of fields an applied configuration sets (identity fields and nulls excluded). */
export function fieldSetOf(obj: Record<string, unknown>, schema: TypeSchema | undefined): FieldSet {
  const out: FieldSet = new Map();
  walkObject(obj, schema, [], out);
  return out;
}

/** Renders a set as a FieldsV1 object (`{"f:spec":{"f:replicas":{}}}`), members with children marked by `"."`. */
export function toFieldsV1(set: FieldSet): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const sorted = [...set.values()].sort((a, b) => (pathKey(a) < pathKey(b) ? -1 : 1));
  for (const path of sorted) {
    let node = root;
    for (const seg of path) {
      node[seg] ??= {};
      node = node[seg] as Record<string, unknown>;
    }
  }
  // a member that also has children gets an explicit "." entry
  for (const path of sorted) {
    let node = root;
    for (const seg of path) node = node[seg] as Record<string, unknown>;
    if (Object.keys(node).length > 0) node['.'] = {};
  }
  return root;
}

/** Parses a FieldsV1 object back into a set; tolerates anything malformed by ignoring it. */
export function fromFieldsV1(fields: unknown): FieldSet {
  const out: FieldSet = new Map();
  const walk = (node: Record<string, unknown>, path: FieldPath) => {
    for (const [k, child] of Object.entries(node)) {
      if (k === '.' || !isObject(child)) continue;
      const p = [...path, k];
      const keys = Object.keys(child);
      if (keys.length === 0 || keys.includes('.')) add(out, p);
      walk(child, p);
    }
  };
  if (isObject(fields)) walk(fields, []);
  return out;
}

/** Where a path segment points inside a container: an object member or an array index. */
function locate(container: unknown, seg: string): { key: string | number; value: unknown } | undefined {
  if (seg.startsWith('f:')) {
    if (!isObject(container)) return undefined;
    const key = seg.slice(2);
    return Object.hasOwn(container, key) ? { key, value: container[key] } : undefined;
  }
  if (!Array.isArray(container)) return undefined;
  let match: (el: unknown) => boolean;
  try {
    if (seg.startsWith('k:')) {
      const keys = JSON.parse(seg.slice(2)) as Record<string, unknown>;
      match = (el) => isObject(el) && Object.entries(keys).every(([k, v]) => jsonEqual(el[k], v));
    } else if (seg.startsWith('v:')) {
      const value = JSON.parse(seg.slice(2)) as unknown;
      match = (el) => jsonEqual(el, value);
    } else if (seg.startsWith('i:')) {
      const i = Number(seg.slice(2));
      return Number.isInteger(i) && i >= 0 && i < container.length ? { key: i, value: container[i] } : undefined;
    } else {
      return undefined;
    }
  } catch {
    return undefined;
  }
  const idx = container.findIndex(match);
  return idx >= 0 ? { key: idx, value: container[idx] } : undefined;
}

/** The value at `path`, or undefined when any step is missing. */
export function getAtPath(root: unknown, path: FieldPath): unknown {
  let cur = root;
  for (const seg of path) {
    const loc = locate(cur, seg);
    if (!loc) return undefined;
    cur = loc.value;
  }
  return cur;
}

/** Removes the field or list item at `path` from `root` (mutating it); true when something was removed. */
export function deleteAtPath(root: unknown, path: FieldPath): boolean {
  if (path.length === 0) return false;
  const parent = getAtPath(root, path.slice(0, -1));
  const loc = locate(parent, path[path.length - 1]);
  if (!loc) return false;
  if (Array.isArray(parent)) parent.splice(loc.key as number, 1);
  else delete (parent as Record<string, unknown>)[loc.key as string];
  return true;
}

/** Kubernetes' human form of a path: `.spec.template.spec.containers[name="web"].image`, `.metadata.finalizers[="x"]`. */
export function formatFieldPath(path: FieldPath): string {
  return path
    .map((seg) => {
      if (seg.startsWith('f:')) return `.${seg.slice(2)}`;
      if (seg.startsWith('k:')) {
        try {
          const keys = JSON.parse(seg.slice(2)) as Record<string, unknown>;
          return `[${Object.entries(keys)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(',')}]`;
        } catch {
          return `[${seg.slice(2)}]`;
        }
      }
      if (seg.startsWith('v:')) return `[=${seg.slice(2)}]`;
      if (seg.startsWith('i:')) return `[${seg.slice(2)}]`;
      return `.${seg}`;
    })
    .join('');
}
