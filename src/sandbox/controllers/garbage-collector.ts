/**
 * Garbage collection through ownerReferences: when an owner goes, dependents whose owners are all gone are deleted
 * (background propagation, cascading further through their own dependents); an owner deleted in the foreground keeps
 * its `foregroundDeletion` finalizer until its dependents are gone.
 */
import type { ObjectStore } from '../store.js';
import type { KubeObject } from '../types.js';
import type { Controller } from './runner.js';

const FOREGROUND = 'foregroundDeletion';

function key(kindKey: string, namespace: string | undefined, name: string): string {
  return `${kindKey}|${namespace ?? ''}|${name}`;
}

/** Creates the controller. */
export function createGarbageCollector(store: ObjectStore): Controller {
  const registry = store.registry;

  function ownersGone(obj: KubeObject): boolean {
    const refs = obj.metadata.ownerReferences ?? [];
    if (refs.length === 0) return false;
    return refs.every((ref) => {
      const info = registry.byKind(ref.apiVersion, ref.kind);
      if (!info) return true;
      const owner = store.peek(info, info.namespaced ? obj.metadata.namespace : undefined, ref.name);
      return !owner || owner.metadata.uid !== ref.uid;
    });
  }

  function reconcile(k: string): void {
    const [kindKey, ns, name] = k.split('|') as [string, string, string];
    const info = registry.byKindKey(kindKey);
    if (!info) return;
    const obj = store.peek(info, ns || undefined, name);
    if (!obj) return;
    if (obj.metadata.deletionTimestamp && obj.metadata.finalizers?.includes(FOREGROUND)) {
      const dependents = store.dependentsOf(obj.metadata.uid!);
      if (dependents.length === 0) {
        store.update(info, { ...obj, metadata: { ...obj.metadata, finalizers: obj.metadata.finalizers.filter((f) => f !== FOREGROUND) } });
        return;
      }
      for (const dep of dependents) {
        if (dep.obj.metadata.deletionTimestamp) continue;
        store.delete(dep.info, dep.obj.metadata.namespace, dep.obj.metadata.name!, { propagationPolicy: 'Foreground' });
      }
      return;
    }
    if (ownersGone(obj) && !obj.metadata.deletionTimestamp) {
      store.delete(info, obj.metadata.namespace, obj.metadata.name!, { propagationPolicy: 'Background' });
    }
  }

  return {
    name: 'garbage-collector',
    *keysFor(event) {
      const obj = event.object;
      const uid = obj.metadata.uid;
      if (event.type === 'DELETED' && uid) {
        for (const dep of store.dependentsOf(uid))
          yield key(`${dep.info.group}/${dep.info.kind}`, dep.obj.metadata.namespace, dep.obj.metadata.name!);
      }
      if (event.type === 'MODIFIED' && obj.metadata.deletionTimestamp && obj.metadata.finalizers?.includes(FOREGROUND)) {
        yield key(event.kindKey, obj.metadata.namespace, obj.metadata.name!);
      }
      if (event.type === 'DELETED') {
        // a dependent went away: its foreground-deleting owners may now finish
        for (const ref of obj.metadata.ownerReferences ?? []) {
          const info = registry.byKind(ref.apiVersion, ref.kind);
          if (info) yield key(`${info.group}/${info.kind}`, info.namespaced ? obj.metadata.namespace : undefined, ref.name);
        }
      }
      if (event.type === 'ADDED' && obj.metadata.ownerReferences?.length) {
        // created pointing at an owner that is already gone
        yield key(event.kindKey, obj.metadata.namespace, obj.metadata.name!);
      }
    },
    reconcile,
  };
}
