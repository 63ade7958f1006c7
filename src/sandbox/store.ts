/**
 * (Over 400 lines on purpose: one class, so every write path enforces the store's invariants in one place.)
 *
 * The in-memory object store: one bucket per kind, one cluster-wide resourceVersion that grows by exactly one per
 * committed change, and a history window of those changes for watch resume. It enforces what the API server promises
 * regardless of the caller (HTTP handler, controller or test): uid/creationTimestamp/generation, namespaces existing,
 * optimistic concurrency, no-op writes producing nothing, finalizers, orphan deletes, namespace teardown, and a
 * capacity of pods (403 past it, as under a ResourceQuota) so no workload can make the controllers fill the memory.
 *
 * Stored objects are never mutated after they are stored; readers that hand objects out must clone them (`get` and
 * `list` do; `peek` and events share the stored reference and callers must not modify it).
 */
import { randomUUID } from 'node:crypto';
import { ApiError, errors } from './errors.js';
import { createHistory, type History } from './history.js';
import { jsonEqual, jsonEqualExcept } from './json-equal.js';
import { applyDefaults } from './defaults.js';
import { apiVersionOf, kindKeyOf, type KindInfo, type KindRegistry } from './kinds.js';
import { cloneJson, isPlainObject, type ChangeType, type KubeObject, type StoreEvent } from './types.js';
import { checkMetadataTypes, validateObject } from './validate.js';

/** Options for {@link ObjectStore.delete}. */
export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/** Options for writes. */
export interface WriteOptions {
  dryRun?: boolean;
  /** `status` writes only the status; the main resource keeps the old status for kinds with a status subresource. */
  subresource?: 'status';
}

/** One page of a list. */
export interface ListPage {
  items: KubeObject[];
  /** The key to continue after, when more items remain. */
  continueAfter?: string;
  remaining: number;
}

interface Bucket {
  objects: Map<string, KubeObject>;
  sorted: string[] | null;
}

/** Listener for committed changes; called synchronously, in resourceVersion order. */
export type StoreListener = (event: StoreEvent) => void;

const GC_FINALIZER_ORPHAN = 'orphan';
const GC_FINALIZER_FOREGROUND = 'foregroundDeletion';

/** Kubernetes' timestamp format: RFC 3339 with seconds. */
export function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

function lowerBound(sorted: string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const NAME_SUFFIX_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** A random 5-character suffix as the API server appends for generateName. */
export function randomSuffix(length = 5): string {
  let out = '';
  for (let i = 0; i < length; i++) out += NAME_SUFFIX_CHARS[Math.floor(Math.random() * NAME_SUFFIX_CHARS.length)];
  return out;
}

/** Pods a store holds at most unless told otherwise (see {@link createObjectStore}). */
const DEFAULT_MAX_PODS = 1000;

/** The store; create one per sandbox with {@link createObjectStore}. */
export class ObjectStore {
  private rvCounter = 0;
  private readonly buckets = new Map<string, Bucket>();
  private readonly listeners = new Set<StoreListener>();
  private readonly ownerIndex = new Map<string, Set<string>>();
  private history: History;

  constructor(
    readonly registry: KindRegistry,
    historyWindow: number,
    private readonly maxPods: number = DEFAULT_MAX_PODS,
  ) {
    this.history = createHistory(historyWindow);
  }

  /** The current cluster-wide resourceVersion. */
  get resourceVersion(): number {
    return this.rvCounter;
  }

  /** The newest version no longer in history; watches from older versions get 410. */
  get compactedRv(): number {
    return this.history.compactedRv;
  }

  /** Registers a change listener; returns the unsubscribe function. */
  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events after `rv`, or undefined when that version is older than the history window. */
  eventsSince(rv: number): StoreEvent[] | undefined {
    return this.history.since(rv);
  }

  /** Drops the whole history: every watch or continue token from an older version now gets 410. */
  expireHistory(): void {
    this.history.expire(this.rvCounter);
  }

  /** Resolves apiVersion + kind to a served kind, or throws 400 like the API server does for an unknown kind. */
  kindOf(apiVersion: unknown, kind: unknown): KindInfo {
    if (typeof apiVersion !== 'string' || !apiVersion || typeof kind !== 'string' || !kind) {
      throw errors.badRequest("Object 'Kind' is missing in the request body, or apiVersion is not set");
    }
    const info = this.registry.byKind(apiVersion, kind);
    if (!info || info.virtual) throw errors.badRequest(`no kind "${kind}" is registered for version "${apiVersion}"`);
    return info;
  }

  private bucket(info: KindInfo): Bucket {
    const key = kindKeyOf(info.group, info.kind);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { objects: new Map(), sorted: null };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /** The stored object itself (do not modify), or undefined. */
  peek(info: KindInfo, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.buckets.get(kindKeyOf(info.group, info.kind))?.objects.get(objectKey(info.namespaced ? namespace : undefined, name));
  }

  /** A copy of the stored object, or undefined. */
  get(info: KindInfo, namespace: string | undefined, name: string): KubeObject | undefined {
    const obj = this.peek(info, namespace, name);
    return obj ? cloneJson(obj) : undefined;
  }

  /** Number of stored objects of a kind. */
  count(info: KindInfo): number {
    return this.buckets.get(kindKeyOf(info.group, info.kind))?.objects.size ?? 0;
  }

  /**
   * Stored objects (shared references) of a kind in key order, optionally in one namespace, after a key, filtered,
   * at most `limit` of them. `remaining` counts the matching objects not returned.
   */
  scan(info: KindInfo, opts: { namespace?: string; after?: string; limit?: number; filter?: (obj: KubeObject) => boolean } = {}): ListPage {
    const bucket = this.buckets.get(kindKeyOf(info.group, info.kind));
    if (!bucket) return { items: [], remaining: 0 };
    if (!bucket.sorted) bucket.sorted = [...bucket.objects.keys()].sort();
    const sorted = bucket.sorted;
    const prefix = info.namespaced && opts.namespace ? `${opts.namespace}/` : '';
    let i = lowerBound(sorted, prefix);
    if (opts.after !== undefined && opts.after >= prefix) {
      i = lowerBound(sorted, opts.after);
      if (sorted[i] === opts.after) i++;
    }
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    if (!opts.filter) {
      // no filter: the page is a slice of the sorted range, and what remains is counted, not scanned
      const end = prefix ? lowerBound(sorted, `${prefix}\uffff`) : sorted.length;
      const stop = Math.min(end, i + limit);
      const items = sorted.slice(i, stop).map((key) => bucket.objects.get(key)!);
      const remaining = end - stop;
      return { items, remaining, continueAfter: remaining > 0 ? sorted[stop - 1] : undefined };
    }
    const items: KubeObject[] = [];
    let continueAfter: string | undefined;
    let remaining = 0;
    for (; i < sorted.length; i++) {
      const key = sorted[i]!;
      if (prefix && !key.startsWith(prefix)) break;
      const obj = bucket.objects.get(key)!;
      if (opts.filter && !opts.filter(obj)) continue;
      if (items.length >= limit) {
        remaining++;
        continue;
      }
      items.push(obj);
      if (items.length === limit) continueAfter = key;
    }
    if (remaining === 0) continueAfter = undefined;
    return { items, continueAfter, remaining };
  }

  /** Copies of every object of a kind (optionally in one namespace), in key order. */
  list(info: KindInfo, namespace?: string): KubeObject[] {
    return this.scan(info, { namespace }).items.map((o) => cloneJson(o));
  }

  /** Objects whose ownerReferences name `uid`, as [kind, stored object]. */
  dependentsOf(uid: string): { info: KindInfo; obj: KubeObject }[] {
    const refs = this.ownerIndex.get(uid);
    if (!refs) return [];
    const out: { info: KindInfo; obj: KubeObject }[] = [];
    for (const ref of refs) {
      const sep = ref.indexOf('|');
      const kindKey = ref.slice(0, sep);
      const info = this.registry.byKindKey(kindKey);
      const obj = this.buckets.get(kindKey)?.objects.get(ref.slice(sep + 1));
      if (info && obj) out.push({ info, obj });
    }
    return out;
  }

  /** True when an object with this uid is stored (any kind); used by garbage collection. */
  uidExists(info: KindInfo | undefined, namespace: string | undefined, name: string, uid: string): boolean {
    if (!info) return false;
    return this.peek(info, namespace, name)?.metadata.uid === uid;
  }

  private indexOwners(kindKey: string, key: string, before: KubeObject | undefined, after: KubeObject | undefined): void {
    const ref = `${kindKey}|${key}`;
    for (const owner of before?.metadata.ownerReferences ?? []) this.ownerIndex.get(owner.uid)?.delete(ref);
    for (const owner of after?.metadata.ownerReferences ?? []) {
      if (!owner || typeof owner.uid !== 'string') continue;
      let set = this.ownerIndex.get(owner.uid);
      if (!set) this.ownerIndex.set(owner.uid, (set = new Set()));
      set.add(ref);
    }
    for (const owner of before?.metadata.ownerReferences ?? []) {
      if (this.ownerIndex.get(owner.uid)?.size === 0) this.ownerIndex.delete(owner.uid);
    }
  }

  private commit(type: ChangeType, info: KindInfo, key: string, obj: KubeObject, old: KubeObject | undefined): KubeObject {
    const kindKey = kindKeyOf(info.group, info.kind);
    const bucket = this.bucket(info);
    const rv = ++this.rvCounter;
    const stored: KubeObject = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
    if (type === 'DELETED') {
      bucket.objects.delete(key);
      bucket.sorted = null;
      this.indexOwners(kindKey, key, old, undefined);
    } else {
      if (!bucket.objects.has(key)) bucket.sorted = null;
      bucket.objects.set(key, stored);
      this.indexOwners(kindKey, key, old, stored);
    }
    const event: StoreEvent = { type, kindKey, object: stored, oldObject: old, rv };
    this.history.push(event);
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // a failing listener must not break the write that already happened
      }
    }
    return stored;
  }

  private prepareNew(info: KindInfo, input: Record<string, unknown>): KubeObject {
    checkMetadataTypes(input);
    const obj = cloneJson(input) as KubeObject;
    obj.apiVersion = apiVersionOf(info.group, info.versions[0]!);
    obj.kind = info.kind;
    obj.metadata = isPlainObject(obj.metadata) ? obj.metadata : {};
    for (const key of Object.keys(obj.metadata)) if (obj.metadata[key] === null) delete obj.metadata[key];
    if (!info.namespaced) delete obj.metadata.namespace;
    else if (!obj.metadata.namespace) obj.metadata.namespace = 'default';
    return obj;
  }

  /** Stores a new object; throws 409 AlreadyExists, 404 for a missing namespace, 422 for invalid objects. */
  create(info: KindInfo, input: Record<string, unknown>, opts: WriteOptions = {}): KubeObject {
    const obj = this.prepareNew(info, input);
    const meta = obj.metadata;
    if (!meta.name) {
      if (meta.generateName && typeof meta.generateName === 'string') {
        for (let attempt = 0; attempt < 8; attempt++) {
          const candidate = `${meta.generateName}${randomSuffix()}`;
          if (!this.peek(info, meta.namespace, candidate)) {
            meta.name = candidate;
            break;
          }
        }
        if (!meta.name) throw new ApiError(409, 'AlreadyExists', `could not generate a unique name from "${meta.generateName}"`);
      } else {
        throw errors.invalid(info, '', [{ field: 'metadata.name', message: 'Required value: name or generateName is required' }]);
      }
    }
    meta.uid = randomUUID(); // before defaulting: a Job's default selector names it
    applyDefaults(info, obj);
    validateObject(info, obj);
    if (info.namespaced) {
      const ns = this.peek(NAMESPACE_INFO(this.registry), undefined, meta.namespace!);
      if (!ns) throw errors.notFound({ plural: 'namespaces', group: '' }, meta.namespace!);
      if (ns.metadata.deletionTimestamp) {
        throw errors.forbidden(
          `${info.plural} "${meta.name}" is forbidden: unable to create new content in namespace ${meta.namespace} because it is being terminated`,
        );
      }
    }
    const key = objectKey(meta.namespace, meta.name!);
    if (this.bucket(info).objects.has(key)) throw errors.alreadyExists(info, meta.name!);
    const isPod = info.kind === 'Pod' && info.group === '';
    const used = isPod ? this.count(info) : 0;
    if (isPod && used >= this.maxPods) {
      throw errors.forbidden(
        `pods "${meta.name}" is forbidden: exceeded quota: sandbox-capacity, requested: pods=1, used: pods=${used}, limited: pods=${this.maxPods}`,
        { name: meta.name, kind: 'pods' },
      );
    }
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    meta.creationTimestamp = nowTimestamp();
    if (info.hasGeneration || info.custom) meta.generation = 1;
    else delete meta.generation;
    if (opts.dryRun) return { ...obj, metadata: { ...meta, resourceVersion: String(this.rvCounter) } };
    return cloneJson(this.commit('ADDED', info, key, obj, undefined));
  }

  /**
   * Replaces a stored object. A set metadata.resourceVersion must equal the stored one (else 409 Conflict); a write
   * that changes nothing returns the stored object without a new version. Removing the last finalizer from an object
   * being deleted deletes it.
   */
  update(info: KindInfo, input: Record<string, unknown>, opts: WriteOptions = {}): KubeObject {
    const next = this.prepareNew(info, input);
    const name = next.metadata.name;
    if (!name) throw errors.invalid(info, '', [{ field: 'metadata.name', message: 'Required value: name is required' }]);
    const key = objectKey(next.metadata.namespace, name);
    const old = this.bucket(info).objects.get(key);
    if (!old) throw errors.notFound(info, name);
    const rv = next.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== old.metadata.resourceVersion) {
      throw errors.conflict(info, name, 'the object has been modified; please apply your changes to the latest version and try again');
    }
    if (next.metadata.uid && next.metadata.uid !== old.metadata.uid) {
      throw errors.conflict(
        info,
        name,
        `Precondition failed: UID in precondition: ${next.metadata.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    let obj: KubeObject;
    if (opts.subresource === 'status') {
      obj = { ...cloneJson(old), status: next.status };
      if (next.status === undefined) delete obj.status;
    } else {
      obj = next;
      if (info.subresources.includes('status')) {
        if (old.status === undefined) delete obj.status;
        else obj.status = cloneJson(old.status);
      }
    }
    const meta = obj.metadata;
    applyDefaults(info, obj, old);
    meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    if (old.metadata.deletionTimestamp) {
      meta.deletionTimestamp = old.metadata.deletionTimestamp;
      if (old.metadata.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
    } else {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    if (old.metadata.generation !== undefined) {
      const specChanged = !jsonEqualExcept(obj, old, ['metadata', 'status', 'apiVersion', 'kind']);
      meta.generation = old.metadata.generation + (specChanged ? 1 : 0);
    } else delete meta.generation;
    validateObject(info, obj);
    const comparableOld = { ...old, metadata: { ...old.metadata, resourceVersion: undefined } };
    const comparableNew = { ...obj, metadata: { ...meta, resourceVersion: undefined } };
    if (jsonEqual(comparableOld, comparableNew)) return cloneJson(old);
    if (opts.dryRun) return { ...obj, metadata: { ...meta, resourceVersion: old.metadata.resourceVersion } };
    if (meta.deletionTimestamp && (!meta.finalizers || meta.finalizers.length === 0)) {
      return cloneJson(this.commit('DELETED', info, key, obj, old));
    }
    return cloneJson(this.commit('MODIFIED', info, key, obj, old));
  }

  /**
   * Deletes an object. With finalizers (or Foreground propagation) it only gets a deletionTimestamp and is removed
   * when the last finalizer goes. Orphan propagation strips this owner from dependents first. Deleting a namespace
   * deletes everything in it. Returns the final state (deleted, or marked for deletion).
   */
  delete(info: KindInfo, namespace: string | undefined, name: string, opts: DeleteOptions = {}): { obj: KubeObject; deleted: boolean } {
    const key = objectKey(info.namespaced ? namespace : undefined, name);
    const old = this.bucket(info).objects.get(key);
    if (!old) throw errors.notFound(info, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== old.metadata.uid) {
      throw errors.conflict(info, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
      throw errors.conflict(
        info,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
      );
    }
    if (opts.dryRun) return { obj: cloneJson(old), deleted: true };
    let policy = opts.propagationPolicy;
    if (!policy && old.metadata.finalizers?.includes(GC_FINALIZER_ORPHAN)) policy = 'Orphan';
    if (policy === 'Orphan') this.orphanDependents(old);
    const finalizers = (old.metadata.finalizers ?? []).filter((f) => f !== GC_FINALIZER_ORPHAN);
    if (policy === 'Foreground' && this.dependentsOf(old.metadata.uid!).length > 0 && !finalizers.includes(GC_FINALIZER_FOREGROUND)) {
      finalizers.push(GC_FINALIZER_FOREGROUND);
    }
    if (info.kind === 'Namespace' && info.group === '') {
      return this.deleteNamespace(info, key, old);
    }
    if (finalizers.length > 0) {
      if (old.metadata.deletionTimestamp && jsonEqual(finalizers, old.metadata.finalizers)) return { obj: cloneJson(old), deleted: false };
      const marked: KubeObject = {
        ...old,
        metadata: {
          ...old.metadata,
          deletionTimestamp: old.metadata.deletionTimestamp ?? nowTimestamp(),
          deletionGracePeriodSeconds: 0,
          finalizers,
        },
      };
      return { obj: cloneJson(this.commit('MODIFIED', info, key, marked, old)), deleted: false };
    }
    return { obj: cloneJson(this.commit('DELETED', info, key, old, old)), deleted: true };
  }

  private deleteNamespace(info: KindInfo, key: string, old: KubeObject): { obj: KubeObject; deleted: boolean } {
    const ns = old.metadata.name!;
    const marked: KubeObject = {
      ...old,
      metadata: { ...old.metadata, deletionTimestamp: old.metadata.deletionTimestamp ?? nowTimestamp() },
      status: { phase: 'Terminating' },
    };
    const current = this.commit('MODIFIED', info, key, marked, old);
    for (const kind of this.registry.all()) {
      if (!kind.namespaced || kind.virtual) continue;
      for (const obj of this.scan(kind, { namespace: ns }).items) {
        const objKey = objectKey(ns, obj.metadata.name!);
        const stripped: KubeObject = { ...obj, metadata: { ...obj.metadata, finalizers: undefined } };
        delete stripped.metadata.finalizers;
        this.commit('DELETED', kind, objKey, stripped, obj);
      }
    }
    return { obj: cloneJson(this.commit('DELETED', info, key, current, current)), deleted: true };
  }

  private orphanDependents(owner: KubeObject): void {
    const uid = owner.metadata.uid!;
    for (const { info, obj } of this.dependentsOf(uid)) {
      const refs = (obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
      const next: KubeObject = { ...obj, metadata: { ...obj.metadata, ownerReferences: refs } };
      if (refs.length === 0) delete next.metadata.ownerReferences;
      this.commit('MODIFIED', info, objectKey(obj.metadata.namespace, obj.metadata.name!), next, obj);
    }
  }
}

const NAMESPACE_INFO = (registry: KindRegistry): KindInfo => registry.byKindKey('/Namespace')!;

/**
 * Creates an empty store (no namespaces yet) with the given history window and pod capacity: a pod create past
 * `maxPods` is 403 Forbidden "exceeded quota" (the controllers record FailedCreate and stop there).
 */
export function createObjectStore(registry: KindRegistry, historyWindow = 10000, maxPods = DEFAULT_MAX_PODS): ObjectStore {
  return new ObjectStore(registry, historyWindow, maxPods);
}
