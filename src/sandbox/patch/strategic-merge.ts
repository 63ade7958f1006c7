/**
 * Kubernetes strategic merge patch (`application/strategic-merge-patch+json`), following
 * k8s.io/apimachinery/pkg/util/strategicpatch: lists with a patch merge key merge element by element, primitive
 * lists with the merge strategy merge as sets, other lists replace, and the directives `$patch`
 * (replace/delete/merge), `$retainKeys`, `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>` are
 * honoured. Element order follows upstream: `$setElementOrder` first, then patch order, then live order.
 */
import { PatchError, cloneJson, isObject } from './errors.js';
import { type FieldPatchMeta, type TypeSchema, schemaForKind } from './schema.js';

type Obj = Record<string, unknown>;

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_PRIMITIVE_PREFIX = '$deleteFromPrimitiveList/';
const SET_ORDER_PREFIX = '$setElementOrder/';

function kindOf(v: unknown): 'object' | 'array' | 'scalar' {
  return Array.isArray(v) ? 'array' : isObject(v) ? 'object' : 'scalar';
}

function bad(message: string): never {
  throw new PatchError(400, `invalid strategic merge patch: ${message}`);
}

/** Turns a patch value into a plain value for a field the original lacks, processing any directives inside it. */
function materialize(value: unknown, meta: FieldPatchMeta | undefined): unknown {
  if (isObject(value)) return mergeMap({}, value, meta?.schema);
  if (Array.isArray(value)) return mergeList([], value, meta, false);
  return value;
}

function mergeMap(original: Obj, patch: Obj, schema: TypeSchema | undefined): Obj {
  patch = { ...patch };
  if (DIRECTIVE in patch) {
    const d = patch[DIRECTIVE];
    delete patch[DIRECTIVE];
    // as upstream: the map becomes empty (the typed API server then re-defaults it)
    if (d === 'delete') return {};
    if (d === 'replace') return mergeMap({}, patch, schema);
    if (d !== 'merge') bad(`unknown $patch directive ${JSON.stringify(d)} (expected replace, delete or merge)`);
  }

  if (RETAIN_KEYS in patch) {
    const keep = patch[RETAIN_KEYS];
    delete patch[RETAIN_KEYS];
    if (!Array.isArray(keep) || keep.some((k) => typeof k !== 'string')) bad('$retainKeys must be a list of strings');
    const keepSet = new Set(keep as string[]);
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || k.startsWith(DELETE_PRIMITIVE_PREFIX) || k.startsWith(SET_ORDER_PREFIX)) continue;
      if (!keepSet.has(k)) bad(`field "${k}" is set in the patch but missing from $retainKeys`);
    }
    for (const k of Object.keys(original)) if (!keepSet.has(k)) delete original[k];
  }

  // $setElementOrder/<field>: merge that list now and order it; the list is then done.
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ORDER_PREFIX)) continue;
    const order = patch[key];
    delete patch[key];
    const field = key.slice(SET_ORDER_PREFIX.length);
    if (!field) bad(`"${key}" names no field`);
    if (!Array.isArray(order)) bad(`${key} must be a list`);
    const meta = schema?.[field];
    const hasOrig = Array.isArray(original[field]);
    const patchList = patch[field];
    if (patchList !== undefined && patchList !== null && !Array.isArray(patchList)) bad(`${field} must be a list`);
    const hasPatch = Array.isArray(patchList);
    if (!hasOrig && !hasPatch) continue;
    const mergeKey = meta?.strategy === 'merge' ? meta.mergeKey : undefined;
    if (hasPatch) validateAgainstOrder(patchList as unknown[], order, mergeKey, field);
    const origList = hasOrig ? (original[field] as unknown[]) : [];
    let merged: unknown[];
    if (hasOrig && hasPatch) merged = mergeList(origList, patchList as unknown[], meta, false);
    else if (hasPatch) merged = mergeList([], patchList as unknown[], meta, false);
    else merged = origList;
    if (hasPatch) delete patch[field];
    if (meta?.strategy === 'merge') {
      const inOrder = (item: unknown) => indexIn(order, item, mergeKey) >= 0;
      const patchItems = merged.filter(inOrder);
      const serverOnly = merged.filter((i) => !inOrder(i));
      merged = normalizeElementOrder(patchItems, serverOnly, order, origList, mergeKey);
    }
    original[field] = merged;
  }

  for (const [key, patchValue] of Object.entries(patch)) {
    if (key.startsWith(DELETE_PRIMITIVE_PREFIX)) {
      const field = key.slice(DELETE_PRIMITIVE_PREFIX.length);
      if (!field) bad(`"${key}" names no field`);
      if (!Array.isArray(patchValue)) bad(`${key} must be a list`);
      const current = original[field];
      if (Array.isArray(current)) {
        original[field] = current.filter((v) => !(patchValue as unknown[]).some((d) => jsonEqual(d, v)));
      }
      continue;
    }
    const meta = schema?.[key];
    if (patchValue === null) {
      delete original[key];
      continue;
    }
    const current = original[key];
    if (current === undefined || current === null || kindOf(current) !== kindOf(patchValue)) {
      original[key] = materialize(patchValue, meta);
      continue;
    }
    if (isObject(current)) {
      original[key] =
        meta?.strategy === 'replace'
          ? materialize(patchValue, { ...meta, strategy: undefined })
          : mergeMap(current, patchValue as Obj, meta?.schema);
    } else if (Array.isArray(current)) {
      original[key] = mergeList(current, patchValue as unknown[], meta, false);
    } else {
      original[key] = patchValue;
    }
  }
  return original;
}

function mergeKeyValue(item: unknown, mergeKey: string, where: string): unknown {
  if (!isObject(item)) bad(`${where}: list element ${JSON.stringify(item)} is not an object`);
  if (!(mergeKey in item)) bad(`${where}: map ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
  return item[mergeKey];
}

function mergeList(original: unknown[], patch: unknown[], meta: FieldPatchMeta | undefined, isDeleteList: boolean): unknown[] {
  if (meta?.strategy !== 'merge') return cloneJson(patch);
  if (original.length === 0 && patch.length === 0) return [];
  const all = [...original, ...patch];
  const objects = all.filter(isObject).length;
  if (objects !== 0 && objects !== all.length) bad('list elements are not all of the same type');
  if (all.some(Array.isArray)) bad('lists of lists are not supported');

  if (objects === 0) {
    // primitives merge as a set
    if (isDeleteList) return original.filter((v) => !patch.some((d) => jsonEqual(d, v)));
    const merged: unknown[] = [];
    for (const v of all) if (!merged.some((m) => jsonEqual(m, v))) merged.push(v);
    const patchItems = merged.filter((v) => patch.some((p) => jsonEqual(p, v)));
    const serverOnly = merged.filter((v) => !patch.some((p) => jsonEqual(p, v)));
    return normalizeElementOrder(patchItems, serverOnly, patch, original, undefined);
  }

  const mergeKey = meta.mergeKey;
  if (!mergeKey) bad('cannot merge a list of objects without a merge key');
  let base = original.map((o) => o);
  const plain: Obj[] = [];
  let replace = false;
  for (const item of patch) {
    const el = item as Obj;
    if (!(DIRECTIVE in el)) {
      plain.push(el);
      continue;
    }
    const d = el[DIRECTIVE];
    if (d === 'delete') {
      const kv = mergeKeyValue(el, mergeKey, '$patch: delete');
      base = base.filter((o) => !(isObject(o) && jsonEqual(o[mergeKey], kv)));
    } else if (d === 'replace') {
      replace = true;
    } else if (d === 'merge') {
      bad('merging lists cannot yet be specified in the patch');
    } else {
      bad(`unknown $patch directive ${JSON.stringify(d)} in list element`);
    }
  }
  if (replace) {
    return plain.map((el) => mergeMap({}, el, meta.schema));
  }

  const merged = base.slice();
  for (const el of plain) {
    const kv = mergeKeyValue(el, mergeKey, 'merge list');
    const idx = merged.findIndex((o) => isObject(o) && jsonEqual(o[mergeKey], kv));
    const v = mergeMap(idx >= 0 ? (merged[idx] as Obj) : {}, el, meta.schema);
    if (idx >= 0) merged[idx] = v;
    else merged.push(v);
  }
  const inPatch = (o: unknown) => plain.some((p) => isObject(o) && jsonEqual(p[mergeKey], o[mergeKey]));
  const patchItems = merged.filter(inPatch);
  const serverOnly = merged.filter((o) => !inPatch(o));
  return normalizeElementOrder(patchItems, serverOnly, plain, base, mergeKey);
}

/** Position of `item` in `list`, by merge key for objects, by value for primitives; -1 when absent. */
function indexIn(list: unknown[], item: unknown, mergeKey: string | undefined): number {
  if (mergeKey !== undefined && isObject(item)) {
    return list.findIndex((o) => isObject(o) && jsonEqual(o[mergeKey], item[mergeKey]));
  }
  return list.findIndex((o) => jsonEqual(o, item));
}

/** Stable sort of `items` by their position in `order`; items absent from `order` keep their place after them. */
function sortByOrder(items: unknown[], order: unknown[], mergeKey: string | undefined): unknown[] {
  const found = items.filter((i) => indexIn(order, i, mergeKey) >= 0);
  const missing = items.filter((i) => indexIn(order, i, mergeKey) < 0);
  found.sort((a, b) => indexIn(order, a, mergeKey) - indexIn(order, b, mergeKey));
  return [...found, ...missing];
}

/**
 * Upstream's normalizeElementOrder + mergeSortedSlice: patch items in patch order, server-only items in live order,
 * interleaved so a server-only item goes before a patch item only when both were in the live list in that order.
 */
function normalizeElementOrder(
  patchItems: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string | undefined,
): unknown[] {
  const right = sortByOrder(patchItems, patchOrder, mergeKey);
  const left = sortByOrder(serverOnly, serverOrder, mergeKey);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey);
      const ri = indexIn(serverOrder, right[j], mergeKey);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

/** `$setElementOrder` must name every (non-deleted) patch element, in the same relative order. */
function validateAgainstOrder(patchList: unknown[], order: unknown[], mergeKey: string | undefined, field: string): void {
  let last = -1;
  for (const item of patchList) {
    if (isObject(item) && item[DIRECTIVE] === 'delete') continue;
    if (isObject(item) && DIRECTIVE in item) continue;
    const idx = indexIn(order, item, mergeKey);
    if (idx < 0) bad(`$setElementOrder/${field} does not contain ${JSON.stringify(item)} from the patch list`);
    if (idx < last) bad(`the order in $setElementOrder/${field} does not match the order of the patch list`);
    last = idx;
  }
}

/** Structural equality of JSON values (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * Merges `patch` into `original` with strategic-merge semantics under `schema` (exported for server-side apply, which
 * merges applied configurations the same way). Works on copies; throws {@link PatchError} 400 on a bad directive.
 */
export function strategicMerge(original: Obj, patch: Obj, schema: TypeSchema | undefined): Obj {
  return mergeMap(cloneJson(original), cloneJson(patch), schema);
}

/**
 * Applies a strategic merge patch to a copy of `target` and returns it; `target` is never mutated. `kindKey` is
 * `group/Kind` (`/Pod`, `apps/Deployment`, `batch/CronJob`) and selects the merge keys; kinds without patch metadata
 * (custom resources) get JSON-merge-patch list semantics. Malformed patches and directives are 400 {@link PatchError}s.
 */
export function applyStrategicMergePatch(target: object, patch: unknown, kindKey: string): Record<string, unknown> {
  if (!isObject(patch)) throw new PatchError(400, 'strategic merge patch must be a JSON object');
  return strategicMerge(target as Obj, patch, schemaForKind(kindKey));
}
