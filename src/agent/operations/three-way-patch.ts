/**
 * kubectl's client-side apply patch: a three-way diff of the last-applied configuration (what we applied before),
 * the new manifest and the live object. Fields the manifest sets and the live object lacks or holds differently are
 * set; fields that were in the last-applied configuration and are gone from the manifest are deleted (null, or a
 * `$patch: delete` list element); fields someone else set (defaults, controllers, other tools) are left alone.
 *
 * With a schema the result is a strategic merge patch (lists merge by key, `$setElementOrder` keeps the manifest's
 * order); without one (custom resources) it is a JSON merge patch (lists replace as a whole).
 */
import type { FieldMeta, PatchSchema } from './patch-meta.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep JSON equality. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}

function diffMergeList(original: unknown, modified: unknown[], current: unknown[], meta: FieldMeta, field: string, out: Obj): void {
  const key = meta.mergeKey!;
  if (!modified.every((el) => isObj(el) && el[key] !== undefined)) {
    if (!jsonEqual(modified, current)) out[field] = modified; // not keyed after all: replace
    return;
  }
  const keyOf = (el: unknown) => JSON.stringify(isObj(el) ? el[key] : undefined);
  const currentBy = new Map(current.filter(isObj).map((el) => [keyOf(el), el]));
  const originalBy = new Map((Array.isArray(original) ? original : []).filter(isObj).map((el) => [keyOf(el), el]));
  const modifiedKeys = new Set(modified.map(keyOf));
  const patch: unknown[] = [];
  for (const el of modified as Obj[]) {
    const live = currentBy.get(keyOf(el));
    if (live === undefined) {
      patch.push(el);
      continue;
    }
    const sub = diffMaps(originalBy.get(keyOf(el)), el, live, meta.fields, true);
    if (Object.keys(sub).length > 0) patch.push({ [key]: el[key], ...sub });
  }
  for (const [k, el] of originalBy) {
    if (!modifiedKeys.has(k) && currentBy.has(k)) patch.push({ [key]: el[key], $patch: 'delete' });
  }
  if (patch.length === 0) return;
  out[field] = patch;
  // keep the manifest's order of the elements it lists (kubectl sends the same directive)
  out[`$setElementOrder/${field}`] = modified.map((el) => ({ [key]: (el as Obj)[key] }));
}

function diffSet(original: unknown, modified: unknown[], current: unknown[], field: string, out: Obj): void {
  const has = (list: unknown[], v: unknown) => list.some((x) => jsonEqual(x, v));
  const added = modified.filter((v) => !has(current, v));
  const removed = (Array.isArray(original) ? original : []).filter((v) => !has(modified, v) && has(current, v));
  if (added.length > 0) out[field] = added;
  if (removed.length > 0) out[`$deleteFromPrimitiveList/${field}`] = removed;
}

function diffMaps(original: unknown, modified: Obj, current: unknown, schema: PatchSchema | undefined, strategic: boolean): Obj {
  const out: Obj = {};
  const live = isObj(current) ? current : {};
  const orig = isObj(original) ? original : {};
  for (const k of Object.keys(orig)) {
    if (!(k in modified) && k in live) out[k] = null;
  }
  for (const [k, m] of Object.entries(modified)) {
    const c = live[k];
    if (jsonEqual(m, c)) continue;
    const meta = schema?.[k];
    if (isObj(m) && isObj(c)) {
      const sub = diffMaps(orig[k], m, c, meta?.fields, strategic);
      if (Object.keys(sub).length > 0) out[k] = sub;
    } else if (strategic && Array.isArray(m) && Array.isArray(c) && meta?.mergeKey) {
      diffMergeList(orig[k], m, c, meta, k, out);
    } else if (strategic && Array.isArray(m) && Array.isArray(c) && meta?.set) {
      diffSet(orig[k], m, c, k, out);
    } else {
      out[k] = m;
    }
  }
  return out;
}

/**
 * The patch turning `current` into what applying `modified` over `original` means (see the module comment). Pass a
 * schema for a strategic merge patch, `undefined` for a JSON merge patch. An empty object means nothing to change.
 */
export function threeWayPatch(original: Obj | undefined, modified: Obj, current: Obj, schema: PatchSchema | undefined): Obj {
  return diffMaps(original, modified, current, schema, schema !== undefined);
}
