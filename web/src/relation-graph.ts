import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { type Related, type Relations, relatedKey, type TreeNode } from './relations-load.js';

/**
 * How an edge ties its two objects, drawn three ways: `owns` by an ownerReference (solid), `selects` by a label
 * selector (dashed), `names` by name (dotted: an Ingress's backend, an HPA's target, a Service's Endpoints).
 */
type EdgeKind = 'owns' | 'selects' | 'names';

/** One object of the graph. */
export interface GraphNode {
  /** `Kind/name` (relatedKey): unique in the graph. */
  id: string;
  kind: string;
  name: string;
  /** The cached object; undefined when the object is only named by another (not in the cache). */
  object?: KubernetesObject;
  /** The object of the page. */
  center: boolean;
}

/** An edge from the object that points (owner, selector, referrer: drawn on the left) to the one pointed at. */
export interface GraphEdge {
  from: string;
  to: string;
  kind: EdgeKind;
}

/** The objects and edges of an object page's graph, nodes in a stable order (the page's object first). */
export interface RelationGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/**
 * Turns the relations loaded for `center` into a graph: the owner chain into `center`, the dependents out of it
 * (and theirs), and every selector or name link, each object once (by `Kind/name`; a known object wins over a
 * mention of the same one that is not in the cache) and each edge once. Pure: the page lays it out and draws it,
 * the unit tests read it.
 */
export function relationGraph(center: KubernetesObject, relations: Relations): RelationGraph {
  const nodes = new Map<string, GraphNode>();
  const edges = new Map<string, GraphEdge>();
  const add = (o: Related, isCenter = false): string => {
    const id = relatedKey(o);
    const known = nodes.get(id);
    if (!known) nodes.set(id, { id, kind: o.kind, name: o.name, object: o.object, center: isCenter });
    else if (!known.object && o.object) known.object = o.object;
    return id;
  };
  const connect = (from: string, to: string, kind: EdgeKind) => {
    if (from === to) return;
    const key = `${from} ${to}`;
    if (!edges.has(key)) edges.set(key, { from, to, kind });
  };

  const centerId = add({ kind: center.kind, name: center.name, object: center }, true);
  let above: string | undefined;
  for (const owner of relations.owners) {
    const id = add(owner);
    if (above) connect(above, id, 'owns');
    above = id;
  }
  if (above) connect(above, centerId, 'owns');

  const down = (parent: string, children: readonly TreeNode[]) => {
    for (const child of children) {
      const id = add(child);
      connect(parent, id, child.byName ? 'names' : 'owns');
      down(id, child.children);
    }
  };
  down(centerId, relations.dependents);

  for (const link of relations.links) {
    connect(add(link.from), add(link.to), link.verb === 'selects' ? 'selects' : 'names');
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()] };
}
