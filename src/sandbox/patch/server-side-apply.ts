/**
 * Server-side apply (`application/apply-patch+yaml`) as the sandbox needs it: the applied configuration is merged into
 * the live object with strategic-merge semantics, and `metadata.managedFields` records which manager owns which
 * fields, so that (1) fields a manager stops applying are removed unless another manager owns them, and (2) changing
 * a field another Apply manager owns is a 409 conflict unless `force` moves the ownership.
 */
import { type ApplyConflict, PatchError, cloneJson, isObject } from './errors.js';
import {
  type FieldPath,
  type FieldSet,
  deleteAtPath,
  fieldSetOf,
  formatFieldPath,
  fromFieldsV1,
  getAtPath,
  pathKey,
  toFieldsV1,
} from './field-set.js';
import { schemaForKind } from './schema.js';
import { jsonEqual, strategicMerge } from './strategic-merge.js';

type Obj = Record<string, unknown>;

/** Options of {@link applyServerSideApply}. */
export interface ServerSideApplyOptions {
  /** `?fieldManager=`; required for apply (kubectl sends `kubectl`), at most 128 characters. */
  fieldManager: string;
  /** `?force=true`: take ownership of conflicting fields instead of failing with 409. */
  force: boolean;
  /** `group/Kind` of the object (`apps/Deployment`, `/Pod`), selecting merge keys. */
  kindKey: string;
  /** Clock for the managedFields `time` stamp (tests). */
  now?: Date;
}

interface ManagerEntry {
  raw: Obj;
  manager: string;
  operation: string;
  subresource: string;
  set: FieldSet | undefined;
}

const DIRECTIVE_KEY = /^\$(patch|retainKeys|setElementOrder\/|deleteFromPrimitiveList\/)/;

function rejectDirectives(v: unknown, where: string): void {
  if (Array.isArray(v)) v.forEach((el, i) => rejectDirectives(el, `${where}[${i}]`));
  else if (isObject(v)) {
    for (const [k, child] of Object.entries(v)) {
      if (DIRECTIVE_KEY.test(k))
        throw new PatchError(400, `apply configuration must not contain patch directive "${k}" at ${where || '.'}`);
      rejectDirectives(child, `${where}.${k}`);
    }
  }
}

function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (!isObject(v)) return v;
  const out: Obj = {};
  for (const [k, child] of Object.entries(v)) if (child !== null && child !== undefined) out[k] = dropNulls(child);
  return out;
}

function validateApplied(applied: unknown): Obj {
  if (!isObject(applied)) throw new PatchError(400, 'apply configuration must be an object');
  if (typeof applied.apiVersion !== 'string' || applied.apiVersion === '') {
    throw new PatchError(400, 'apply configuration must set apiVersion');
  }
  if (typeof applied.kind !== 'string' || applied.kind === '') throw new PatchError(400, 'apply configuration must set kind');
  const meta = applied.metadata;
  if (!isObject(meta) || typeof meta.name !== 'string' || meta.name === '') {
    throw new PatchError(400, 'apply configuration must set metadata.name');
  }
  rejectDirectives(applied, '');
  return applied;
}

function nowStamp(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function readEntries(live: Obj): { entries: ManagerEntry[]; other: unknown[] } {
  const meta = isObject(live.metadata) ? live.metadata : {};
  const list = Array.isArray(meta.managedFields) ? meta.managedFields : [];
  const entries: ManagerEntry[] = [];
  const other: unknown[] = [];
  for (const raw of list) {
    if (!isObject(raw) || typeof raw.manager !== 'string') {
      other.push(raw);
      continue;
    }
    entries.push({
      raw,
      manager: raw.manager,
      operation: typeof raw.operation === 'string' ? raw.operation : '',
      subresource: typeof raw.subresource === 'string' ? raw.subresource : '',
      set: raw.fieldsType === 'FieldsV1' || raw.fieldsV1 !== undefined ? fromFieldsV1(raw.fieldsV1) : undefined,
    });
  }
  return { entries, other };
}

function conflictMessage(conflicts: ApplyConflict[]): string {
  if (conflicts.length === 1) {
    return `Apply failed with 1 conflict: conflict with ${JSON.stringify(conflicts[0].manager)}: ${conflicts[0].field}`;
  }
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.field]);
  const lines: string[] = [];
  for (const manager of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${JSON.stringify(manager)}:`);
    for (const f of byManager.get(manager)!) lines.push(`- ${f}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

function isItemPath(path: FieldPath): boolean {
  const last = path[path.length - 1];
  return last.startsWith('k:') || last.startsWith('v:') || last.startsWith('i:');
}

function ownsUnder(set: FieldSet | undefined, prefix: FieldPath): boolean {
  if (!set) return false;
  const p = pathKey(prefix).slice(0, -1); // '["a","b"' — a prefix of every descendant's key
  for (const key of set.keys()) if (key === pathKey(prefix) || key.startsWith(`${p},`)) return true;
  return false;
}

/** `…/k:{"name":"x"}/f:name`: the key of a list item goes only with the item itself. */
function isItemKeyField(path: FieldPath): boolean {
  if (path.length < 2) return false;
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  if (!last.startsWith('f:') || !parent.startsWith('k:')) return false;
  try {
    return Object.hasOwn(JSON.parse(parent.slice(2)), last.slice(2));
  } catch {
    return false;
  }
}

function withoutManagedFields(obj: Obj): Obj {
  const meta = isObject(obj.metadata) ? { ...obj.metadata } : {};
  delete meta.managedFields;
  return { ...obj, metadata: meta };
}

function isEmptyContainer(v: unknown): boolean {
  return (isObject(v) && Object.keys(v).length === 0) || (Array.isArray(v) && v.length === 0);
}

/**
 * Applies `applied` for `opts.fieldManager` and returns the new object; neither input is mutated.
 * - `live` undefined: the result is the validated `applied` plus a managedFields entry (a create).
 * - Otherwise `applied` is merged into `live` (strategic merge semantics for built-in kinds, list replacement for
 *   custom resources); fields this manager applied before and no longer applies are removed unless another manager
 *   owns them; fields owned by another Apply manager with a different value are a 409 {@link PatchError} listing the
 *   conflicts (as Kubernetes words it) unless `force`, which moves their ownership to this manager.
 * 400 for a malformed configuration (missing apiVersion/kind/metadata.name, kind or name differing from live, patch
 * directives, missing field manager). `status` is treated like any other field: callers that serve a status
 * subresource should strip it from `applied` first.
 */
export function applyServerSideApply(
  live: Record<string, unknown> | undefined,
  applied: Record<string, unknown>,
  opts: ServerSideApplyOptions,
): Record<string, unknown> {
  const manager = opts.fieldManager;
  if (typeof manager !== 'string' || manager === '') {
    throw new PatchError(400, 'fieldManager is required for apply patch');
  }
  if (manager.length > 128) throw new PatchError(400, 'fieldManager must be no more than 128 characters');
  const config = dropNulls(cloneJson(validateApplied(applied))) as Obj;
  delete (config.metadata as Obj).managedFields;
  const schema = schemaForKind(opts.kindKey);
  const newSet = fieldSetOf(config, schema);
  const time = nowStamp(opts.now ?? new Date());
  const entryFor = (set: FieldSet): Obj => ({
    manager,
    operation: 'Apply',
    apiVersion: config.apiVersion,
    time,
    fieldsType: 'FieldsV1',
    fieldsV1: toFieldsV1(set),
  });

  if (live === undefined) {
    const created = cloneJson(config);
    (created.metadata as Obj).managedFields = [entryFor(newSet)];
    return created;
  }
  if (!isObject(live)) throw new PatchError(400, 'live object must be an object');
  const liveMeta = isObject(live.metadata) ? live.metadata : {};
  if (typeof live.kind === 'string' && live.kind !== config.kind) {
    throw new PatchError(400, `apply configuration kind "${String(config.kind)}" does not match the object kind "${live.kind}"`);
  }
  const configName = (config.metadata as Obj).name;
  if (typeof liveMeta.name === 'string' && liveMeta.name !== configName) {
    throw new PatchError(
      400,
      `the name of the object (${String(configName)}) does not match the name of the live object (${liveMeta.name})`,
    );
  }

  const { entries, other } = readEntries(live);
  const isMine = (e: ManagerEntry) => e.manager === manager && e.operation === 'Apply' && e.subresource === '';
  const mine = entries.find(isMine);
  const others = entries.filter((e) => !isMine(e));

  // 1. conflicts: a field another manager owns whose value this configuration changes
  const conflicts: ApplyConflict[] = [];
  const changed: FieldPath[] = [];
  for (const path of newSet.values()) {
    if (isItemPath(path)) continue;
    const liveValue = getAtPath(live, path);
    if (liveValue === undefined || jsonEqual(liveValue, getAtPath(config, path))) continue;
    changed.push(path);
    for (const e of others) {
      if (e.operation === 'Apply' && e.set?.has(pathKey(path))) {
        const field = formatFieldPath(path);
        conflicts.push({ manager: e.manager, field, message: `conflict with ${JSON.stringify(e.manager)}` });
      }
    }
  }
  if (conflicts.length > 0 && !opts.force) throw new PatchError(409, conflictMessage(conflicts), conflicts);

  // 2. ownership of changed fields moves to this manager (forced Apply conflicts and Update managers alike)
  for (const path of changed) for (const e of others) e.set?.delete(pathKey(path));

  // 3. fields this manager no longer applies are removed unless someone else still owns them
  const result = cloneJson(live);
  const resultMeta = isObject(result.metadata) ? result.metadata : (result.metadata = {});
  delete (resultMeta as Obj).managedFields;
  if (mine?.set) {
    const removed = [...mine.set.values()].filter((p) => !newSet.has(pathKey(p))).sort((a, b) => b.length - a.length);
    const stillOwned = (p: FieldPath) => ownsUnder(newSet, p) || others.some((e) => ownsUnder(e.set, p));
    for (const path of removed) {
      if (stillOwned(path) || isItemKeyField(path)) continue;
      if (!deleteAtPath(result, path)) continue;
      // prune containers the removal left empty, when nobody owns anything under them
      for (let n = path.length - 1; n >= 1; n--) {
        const parent = path.slice(0, n);
        if (!isEmptyContainer(getAtPath(result, parent)) || stillOwned(parent)) break;
        deleteAtPath(result, parent);
      }
    }
  }

  // 4. merge the configuration in and record ownership
  const merged = strategicMerge(result, config, schema);
  // A no-op apply (same content, same owned fields) keeps this manager's entry as it was, timestamp included, so the
  // store sees no change and writes no new resourceVersion, as the API server does.
  const unchanged = (e: ManagerEntry) =>
    jsonEqual(isObject(e.raw) ? e.raw.fieldsV1 : undefined, toFieldsV1(newSet)) &&
    jsonEqual(withoutManagedFields(merged), withoutManagedFields(live));
  const managed: unknown[] = [];
  let placed = false;
  for (const e of entries) {
    if (isMine(e)) {
      managed.push(unchanged(e) ? e.raw : entryFor(newSet));
      placed = true;
    } else if (e.set === undefined) {
      managed.push(e.raw);
    } else if (e.set.size > 0) {
      managed.push({ ...e.raw, fieldsV1: toFieldsV1(e.set) });
    }
  }
  if (!placed) managed.push(entryFor(newSet));
  managed.push(...other);
  (merged.metadata as Obj).managedFields = managed;
  return merged;
}
