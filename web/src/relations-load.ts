import { Code, ConnectError } from '@connectrpc/connect';
import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import type { Api } from './api.js';
import {
  ingressServiceNames,
  type KindName,
  ownerRefs,
  scaleTarget,
  selectorMatches,
  selectorText,
  serviceSelector,
} from './object-refs.js';

/** Objects listed per call (a Deployment keeps ten old ReplicaSets by default; pods and Services are rarely more). */
const PAGE_SIZE = 500;
/** Levels followed up (Pod → ReplicaSet → Deployment) and down (Deployment → ReplicaSets → Pods). */
const DEPTH = 3;
/** Kinds an HPA may scale, whose pages look for the HPAs scaling them. */
const SCALABLE = new Set(['Deployment', 'ReplicaSet', 'StatefulSet']);

/** An object of the relations: in the cache (`object`), or only named by another object. */
export interface Related extends KindName {
  object?: KubernetesObject;
}

/** An object of the ownership tree, with its own dependents. */
export interface TreeNode extends Related {
  children: TreeNode[];
  /** More dependents exist than were listed (a full page came back). */
  more: boolean;
  /** Tied to its parent by name, not by an ownerReference (a Service's Endpoints). */
  byName?: boolean;
}

/** How the object on the left of a link points at the one on its right, as the list words it. */
type LinkVerb = 'selects' | 'routes to' | 'scales';

/** A relation outside ownership: a Service selecting a Pod, an Ingress naming a Service, an HPA naming its target. */
export interface RelationLink {
  from: Related;
  to: Related;
  verb: LinkVerb;
}

/** Everything the object page shows about the object's neighbours, read from the cache. */
export interface Relations {
  /** Owners from the top (Deployment) down to this object's direct owner. */
  owners: TreeNode[];
  /** This object's dependents, each with its own (a Service's Endpoints first). */
  dependents: TreeNode[];
  /** The object has more direct dependents than were listed. */
  more: boolean;
  /** Selector and name references into and out of the objects above, each once. */
  links: RelationLink[];
}

/** `Kind/name`: one object's identity within the namespace, in the graph and the list. */
export function relatedKey(o: KindName): string {
  return `${o.kind}/${o.name}`;
}

function notFound(err: unknown): boolean {
  return err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument);
}

async function getCached(api: Api, near: KubernetesObject, ref: KindName, signal: AbortSignal): Promise<KubernetesObject | undefined> {
  try {
    const got = await api.objects.getObject(
      { account: near.account, kind: ref.kind, namespace: near.namespace, name: ref.name },
      { signal },
    );
    return got.object;
  } catch (err) {
    if (notFound(err)) return undefined;
    throw err;
  }
}

/** One page of a kind in `near`'s namespace; empty when the account caches no object of that kind (NOT_FOUND). */
async function listKind(
  api: Api,
  near: KubernetesObject,
  kind: string,
  signal: AbortSignal,
  more: { labelSelector?: string; omitObject?: boolean } = {},
): Promise<KubernetesObject[]> {
  try {
    const page = await api.objects.listObjects(
      { account: near.account, namespace: near.namespace, kind, pageSize: PAGE_SIZE, ...more },
      { signal },
    );
    return page.objects;
  } catch (err) {
    if (notFound(err)) return [];
    throw err;
  }
}

/** The chain of controlling owners above `object` (first ownerReference at each level), top first. */
async function ownersOf(api: Api, object: KubernetesObject, signal: AbortSignal): Promise<TreeNode[]> {
  const chain: TreeNode[] = [];
  let current: KubernetesObject | undefined = object;
  for (let level = 0; current && level < DEPTH; level++) {
    const ref: KindName | undefined = ownerRefs(current)[0];
    if (!ref) break;
    const owner = await getCached(api, current, ref, signal);
    chain.unshift({ ...ref, object: owner, children: [], more: false });
    current = owner;
  }
  return chain;
}

/** Objects whose ownerReferences name `owner` (owner_uid), each with its own dependents down to `depth` levels. */
async function dependentsOf(api: Api, owner: KubernetesObject, depth: number, signal: AbortSignal): Promise<TreeNode[]> {
  if (depth === 0 || !owner.uid) return [];
  const page = await api.objects.listObjects(
    { account: owner.account, namespace: owner.namespace, ownerUid: owner.uid, omitObject: true, pageSize: PAGE_SIZE },
    { signal },
  );
  return Promise.all(
    page.objects.map(async (o) => {
      const children = await dependentsOf(api, o, depth - 1, signal);
      return { kind: o.kind, name: o.name, object: o, children, more: children.length >= PAGE_SIZE };
    }),
  );
}

/** A Service's Endpoints: same name and namespace (they have no ownerReference to it). */
async function endpointsOf(api: Api, service: KubernetesObject, signal: AbortSignal): Promise<TreeNode[]> {
  const endpoints = await getCached(api, service, { kind: 'Endpoints', name: service.name }, signal);
  return endpoints ? [{ kind: 'Endpoints', name: endpoints.name, object: endpoints, children: [], more: false, byName: true }] : [];
}

/** What the object itself points at: a Service's pods (by its selector), an Ingress's Services, an HPA's target. */
async function outgoingLinks(api: Api, object: KubernetesObject, signal: AbortSignal): Promise<RelationLink[]> {
  const from: Related = { kind: object.kind, name: object.name, object };
  if (object.kind === 'Service') {
    const selector = serviceSelector(object);
    if (!selector) return [];
    const pods = await listKind(api, object, 'Pod', signal, { labelSelector: selectorText(selector), omitObject: true });
    return pods.map((pod) => ({ from, to: { kind: 'Pod', name: pod.name, object: pod }, verb: 'selects' }));
  }
  const refs: KindName[] =
    object.kind === 'Ingress'
      ? ingressServiceNames(object).map((name) => ({ kind: 'Service', name }))
      : object.kind === 'HorizontalPodAutoscaler'
        ? [scaleTarget(object)].filter((t): t is KindName => t !== undefined)
        : [];
  const verb: LinkVerb = object.kind === 'Ingress' ? 'routes to' : 'scales';
  return Promise.all(refs.map(async (ref) => ({ from, to: { ...ref, object: await getCached(api, object, ref, signal) }, verb })));
}

function flatten(nodes: readonly TreeNode[]): TreeNode[] {
  return nodes.flatMap((n) => [n, ...flatten(n.children)]);
}

/**
 * Loads the object page's relations from the cache: the owners above `object` (up to three) and its dependents
 * below (two levels: a Deployment's ReplicaSets and their Pods), a Service's Endpoints, what the object points at (a Service's pods by its selector, an Ingress's
 * Services, an HPA's target), and what points at the objects found: the Services whose selector matches one of their
 * Pods, the HPAs scaling one of their workloads, then the Ingresses naming one of their Services. Each list reads one
 * page of its kind in the namespace (500 objects); a kind the account does not cache adds nothing. Throws what the
 * API throws otherwise (the caller shows it). Callers re-run it when the account changes: nothing here is cached.
 */
export async function loadRelations(api: Api, object: KubernetesObject, signal: AbortSignal): Promise<Relations> {
  const [owners, dependents, endpoints, outgoing] = await Promise.all([
    ownersOf(api, object, signal),
    dependentsOf(api, object, DEPTH - 1, signal),
    object.kind === 'Service' ? endpointsOf(api, object, signal) : Promise.resolve([]),
    outgoingLinks(api, object, signal),
  ]);
  const center: Related = { kind: object.kind, name: object.name, object };
  const known: Related[] = [center, ...flatten(owners), ...flatten(dependents), ...outgoing.map((l) => l.to)];
  const ofKind = (kinds: Set<string>) => known.filter((o): o is Related & { object: KubernetesObject } => !!o.object && kinds.has(o.kind));
  const pods = ofKind(new Set(['Pod']));
  const workloads = ofKind(SCALABLE);

  const [services, hpas] = await Promise.all([
    pods.length > 0 ? listKind(api, object, 'Service', signal) : Promise.resolve([]),
    workloads.length > 0 ? listKind(api, object, 'HorizontalPodAutoscaler', signal) : Promise.resolve([]),
  ]);
  const links: RelationLink[] = [...outgoing];
  for (const service of services) {
    const selector = serviceSelector(service);
    if (!selector) continue;
    const from: Related = { kind: 'Service', name: service.name, object: service };
    for (const pod of pods) if (selectorMatches(selector, pod.object.labels)) links.push({ from, to: pod, verb: 'selects' });
  }
  for (const hpa of hpas) {
    const target = scaleTarget(hpa);
    const scaled = target && workloads.find((w) => w.kind === target.kind && w.name === target.name);
    if (scaled) links.push({ from: { kind: hpa.kind, name: hpa.name, object: hpa }, to: scaled, verb: 'scales' });
  }

  const servicesByName = new Map<string, Related>();
  for (const o of [...known, ...links.map((l) => l.from)]) if (o.kind === 'Service' && o.object) servicesByName.set(o.name, o);
  const ingresses = servicesByName.size > 0 ? await listKind(api, object, 'Ingress', signal) : [];
  for (const ingress of ingresses) {
    const from: Related = { kind: 'Ingress', name: ingress.name, object: ingress };
    for (const name of ingressServiceNames(ingress)) {
      const service = servicesByName.get(name);
      if (service) links.push({ from, to: service, verb: 'routes to' });
    }
  }
  return { owners, dependents: [...endpoints, ...dependents], more: dependents.length >= PAGE_SIZE, links: uniqueLinks(links) };
}

/** Each link once (the page's own Service is found again among the Services selecting its pods). */
function uniqueLinks(links: readonly RelationLink[]): RelationLink[] {
  const seen = new Set<string>();
  return links.filter((l) => {
    const key = `${relatedKey(l.from)} ${l.verb} ${relatedKey(l.to)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
