/**
 * CustomResourceDefinitions: registering a CRD's kind happens synchronously with the write (so a custom resource can
 * be created right after its CRD), its status gets Established/NamesAccepted conditions, and deleting a CRD removes
 * its kind and every object of it.
 */
import type { Logger } from 'pino';
import { kindKeyOf, type KindInfo } from '../kinds.js';
import type { ObjectStore } from '../store.js';
import { nowTimestamp } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import type { Controller } from './runner.js';

const CRUD = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Derives the served kind of a CRD; undefined when the CRD is incomplete. */
function kindInfoFromCrd(crd: KubeObject): KindInfo | undefined {
  const spec = isPlainObject(crd.spec) ? crd.spec : undefined;
  const names = spec && isPlainObject(spec.names) ? spec.names : undefined;
  if (!spec || !names || typeof spec.group !== 'string' || typeof names.kind !== 'string' || typeof names.plural !== 'string')
    return undefined;
  const versions = (Array.isArray(spec.versions) ? spec.versions : [])
    .filter(isPlainObject)
    .filter((v) => typeof v.name === 'string' && v.served !== false);
  if (versions.length === 0) return undefined;
  const storage = versions.find((v) => v.storage === true) ?? versions[0]!;
  const ordered = [storage, ...versions.filter((v) => v !== storage)];
  const subresources = isPlainObject(storage.subresources) ? storage.subresources : {};
  return {
    group: spec.group,
    versions: ordered.map((v) => v.name as string),
    kind: names.kind,
    listKind: typeof names.listKind === 'string' ? names.listKind : `${names.kind}List`,
    plural: names.plural,
    singular: typeof names.singular === 'string' ? names.singular : names.kind.toLowerCase(),
    namespaced: spec.scope !== 'Cluster',
    verbs: CRUD,
    shortNames: strings(names.shortNames),
    categories: strings(names.categories),
    subresources: [...('status' in subresources ? ['status'] : []), ...('scale' in subresources ? ['scale'] : [])],
    hasGeneration: true,
    custom: true,
  };
}

/** Creates the controller. */
export function createCrdController(store: ObjectStore, logger: Logger): Controller {
  const crds = store.registry.byKindKey('apiextensions.k8s.io/CustomResourceDefinition')!;
  const registered = new Map<string, string>(); // CRD name → kind key

  function observe(crd: KubeObject, deleted: boolean): void {
    const name = crd.metadata.name!;
    const previous = registered.get(name);
    const info = deleted ? undefined : kindInfoFromCrd(crd);
    if (previous && (!info || previous !== kindKeyOf(info.group, info.kind))) {
      store.registry.unregister(previous);
      registered.delete(name);
    }
    if (info) {
      try {
        store.registry.register(info);
        registered.set(name, kindKeyOf(info.group, info.kind));
      } catch (err) {
        logger.warn({ crd: name, err }, 'CRD conflicts with a built-in kind');
      }
    }
  }

  function reconcile(key: string): void {
    const [op, name, kindKey] = key.split('|') as [string, string, string?];
    if (op === 'purge' && kindKey) {
      const [group, kind] = [kindKey.slice(0, kindKey.indexOf('/')), kindKey.slice(kindKey.indexOf('/') + 1)];
      const lingering = {
        group,
        kind,
        versions: ['v0'],
        listKind: '',
        plural: '',
        singular: '',
        namespaced: true,
        verbs: [],
        shortNames: [],
        categories: [],
        subresources: [],
        hasGeneration: false,
      };
      if (store.registry.byKindKey(kindKey)) return; // re-created meanwhile
      for (const scope of [true, false]) {
        for (const obj of store.scan({ ...lingering, namespaced: scope }).items) {
          try {
            store.delete({ ...lingering, namespaced: scope }, obj.metadata.namespace, obj.metadata.name!);
          } catch {
            // already gone
          }
        }
      }
      return;
    }
    const crd = store.peek(crds, undefined, name);
    if (!crd || !registered.has(name)) return;
    const status = isPlainObject(crd.status) ? crd.status : {};
    const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isPlainObject) : [];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
    const spec = crd.spec as Record<string, unknown>;
    const now = nowTimestamp();
    store.update(
      crds,
      {
        ...crd,
        status: {
          acceptedNames: spec.names,
          storedVersions: [kindInfoFromCrd(crd)!.versions[0]],
          conditions: [
            { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found', lastTransitionTime: now },
            {
              type: 'Established',
              status: 'True',
              reason: 'InitialNamesAccepted',
              message: 'the initial names have been accepted',
              lastTransitionTime: now,
            },
          ],
        },
      },
      { subresource: 'status' },
    );
  }

  return {
    name: 'crd',
    *keysFor(event) {
      if (event.kindKey !== 'apiextensions.k8s.io/CustomResourceDefinition') return;
      const name = event.object.metadata.name!;
      const before = registered.get(name);
      observe(event.object, event.type === 'DELETED');
      if (event.type === 'DELETED') {
        if (before) yield `purge|${name}|${before}`;
      } else yield `status|${name}`;
    },
    reconcile,
  };
}
