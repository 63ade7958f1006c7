import { Code, ConnectError } from '@connectrpc/connect';
import type { JsonValue } from '@bufbuild/protobuf';
import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import type { Api } from './api.js';
import { ErrorMessage } from './error-message.js';
import { accountsSignal } from './fleet-signals.js';
import { HealthBadge } from './health-badge.js';
import { objectHref } from './object-href.js';
import { useServices } from './services.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';

/** Dependents listed per object (a Deployment keeps ten old ReplicaSets by default; pods are rarely more). */
const PAGE_SIZE = 500;
/** Levels followed up (Pod → ReplicaSet → Deployment) and down (Deployment → ReplicaSets → Pods). */
const DEPTH = 3;

/** One object of the tree: in the cache (`object`) or only named by an ownerReference. */
interface Node {
  kind: string;
  name: string;
  object?: KubernetesObject;
  children: Node[];
  /** More dependents exist than were listed (a full page came back). */
  more: boolean;
}

interface Tree {
  /** Owners from the top (Deployment) down to this object's direct owner. */
  owners: Node[];
  /** This object's dependents, each with its own. */
  dependents: Node[];
  /** The object has more direct dependents than were listed. */
  more: boolean;
}

interface OwnerRef {
  kind: string;
  name: string;
}

function ownerRefs(object: KubernetesObject): OwnerRef[] {
  const refs = (object.object?.metadata as { [k: string]: JsonValue } | undefined)?.ownerReferences;
  if (!Array.isArray(refs)) return [];
  return refs.flatMap((r) => {
    const ref = r as { kind?: unknown; name?: unknown; controller?: unknown };
    return typeof ref.kind === 'string' && typeof ref.name === 'string' ? [{ kind: ref.kind, name: ref.name }] : [];
  });
}

async function getCached(api: Api, object: KubernetesObject, ref: OwnerRef, signal: AbortSignal): Promise<KubernetesObject | undefined> {
  try {
    const got = await api.objects.getObject(
      { account: object.account, kind: ref.kind, namespace: object.namespace, name: ref.name },
      { signal },
    );
    return got.object;
  } catch (err) {
    if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument)) return undefined;
    throw err;
  }
}

/** The chain of controlling owners above `object` (first ownerReference at each level), top first. */
async function ownersOf(api: Api, object: KubernetesObject, signal: AbortSignal): Promise<Node[]> {
  const chain: Node[] = [];
  let current: KubernetesObject | undefined = object;
  for (let level = 0; current && level < DEPTH; level++) {
    const ref: OwnerRef | undefined = ownerRefs(current)[0];
    if (!ref) break;
    const owner = await getCached(api, current, ref, signal);
    chain.unshift({ kind: ref.kind, name: ref.name, object: owner, children: [], more: false });
    current = owner;
  }
  return chain;
}

/** Objects whose ownerReferences name `owner` (owner_uid), each with its own dependents down to `depth` levels. */
async function dependentsOf(api: Api, owner: KubernetesObject, depth: number, signal: AbortSignal): Promise<Node[]> {
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

/** Dependents listed under `owner`, flagging when its first page was not all of them. */
async function dependentsNode(api: Api, owner: KubernetesObject, signal: AbortSignal): Promise<{ nodes: Node[]; more: boolean }> {
  const nodes = await dependentsOf(api, owner, DEPTH - 1, signal);
  return { nodes, more: nodes.length >= PAGE_SIZE };
}

/** A Service's Endpoints: same name and namespace (they have no ownerReference to it). */
async function endpointsOf(api: Api, service: KubernetesObject, signal: AbortSignal): Promise<Node[]> {
  const endpoints = await getCached(api, service, { kind: 'Endpoints', name: service.name }, signal);
  return endpoints ? [{ kind: 'Endpoints', name: endpoints.name, object: endpoints, children: [], more: false }] : [];
}

async function loadTree(api: Api, object: KubernetesObject, signal: AbortSignal): Promise<Tree> {
  const [owners, dependents, endpoints] = await Promise.all([
    ownersOf(api, object, signal),
    dependentsNode(api, object, signal),
    object.kind === 'Service' ? endpointsOf(api, object, signal) : Promise.resolve([]),
  ]);
  return { owners, dependents: [...endpoints, ...dependents.nodes], more: dependents.more };
}

function NodeLabel({ node }: { node: Node }) {
  return (
    <>
      {node.object ? (
        <a href={objectHref(node.object)}>
          {node.kind} {node.name}
        </a>
      ) : (
        <span>
          {node.kind} {node.name} <span class="muted">(not in the cache)</span>
        </span>
      )}
      {node.object?.health && (
        <>
          {' '}
          <HealthBadge health={node.object.health} />
        </>
      )}
    </>
  );
}

function Nodes({ nodes, labelledBy }: { nodes: Node[]; labelledBy?: string }) {
  return (
    <ul class="tree" aria-labelledby={labelledBy}>
      {nodes.map((n) => (
        <li key={`${n.kind}/${n.name}`} data-node={`${n.kind}/${n.name}`}>
          <NodeLabel node={n} />
          {n.children.length > 0 && <Nodes nodes={n.children} />}
          {n.more && <p class="muted">More dependents are not shown.</p>}
        </li>
      ))}
    </ul>
  );
}

/**
 * The object page's "Ownership" section, from the cache: the owners above the object (a Pod's ReplicaSet and its
 * Deployment, by ownerReferences) and the objects below it (a Deployment's ReplicaSets and their Pods, by owner_uid;
 * a Service's Endpoints by name), each with its health and a link to its own page. Fetched again whenever the
 * object's account receives events. Renders nothing for an object with neither owners nor dependents.
 */
export function OwnershipTree({ object }: { object: KubernetesObject }) {
  const { api } = useServices();
  const { fleet } = useFleet();
  const key = JSON.stringify([object.account, object.kind, object.namespace, object.name, object.uid]);
  const tree = useLiveQuery<Tree>(key, (signal) => loadTree(api, object, signal), accountsSignal(fleet, [object.account]));
  const data = tree.data;
  if (!data && !tree.error) return null;
  if (data && data.owners.length === 0 && data.dependents.length === 0) return null;
  return (
    <section class="panel" aria-labelledby="ownership-title">
      <h2 id="ownership-title">Ownership</h2>
      <ErrorMessage error={tree.error} context="Could not load the owners and dependents" />
      {data && data.owners.length > 0 && (
        <>
          <h3 id="owners-title">Owned by</h3>
          <ol class="owner-chain" aria-labelledby="owners-title">
            {data.owners.map((n) => (
              <li key={`${n.kind}/${n.name}`} data-node={`${n.kind}/${n.name}`}>
                <NodeLabel node={n} />
              </li>
            ))}
          </ol>
        </>
      )}
      {data && data.dependents.length > 0 && (
        <>
          <h3 id="dependents-title">Dependents</h3>
          <Nodes nodes={data.dependents} labelledBy="dependents-title" />
          {data.more && <p class="muted">More dependents are not shown.</p>}
        </>
      )}
    </section>
  );
}
