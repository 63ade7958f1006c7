import { type EdgeLabel, type GraphLabel, graphlib, layout, type NodeLabel } from '@dagrejs/dagre';
import { type GraphLayout, NODE_HEIGHT, NODE_WIDTH, type Point } from './graph-geometry.js';
import type { RelationGraph } from './relation-graph.js';

/** Space between nodes of one column, between columns, and around the drawing. */
const NODE_GAP = 18;
const RANK_GAP = 64;
const MARGIN = 10;

/**
 * Lays the graph out left to right with dagre (rankdir LR): each edge goes from a column to one on its right, so
 * owners and referrers stand left of what they own or name. Every node has the same box (NODE_WIDTH × NODE_HEIGHT):
 * the view truncates long names to fit it. Deterministic for a given graph (same input, same coordinates), so a
 * refresh that changes nothing moves nothing. The cost grows with the node count: callers draw bounded graphs.
 */
export function layoutGraph(graph: RelationGraph): GraphLayout {
  const g = new graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>();
  g.setGraph({ rankdir: 'LR', nodesep: NODE_GAP, ranksep: RANK_GAP, marginx: MARGIN, marginy: MARGIN });
  g.setDefaultEdgeLabel(() => ({}));
  for (const node of graph.nodes) g.setNode(node.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const edge of graph.edges) g.setEdge(edge.from, edge.to);
  layout(g);

  const nodes = graph.nodes.map((node) => {
    const box: NodeLabel = g.node(node.id);
    return { ...node, x: (box.x ?? 0) - NODE_WIDTH / 2, y: (box.y ?? 0) - NODE_HEIGHT / 2 };
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges = graph.edges.map((edge) => {
    const from = byId.get(edge.from)!;
    const to = byId.get(edge.to)!;
    const start = { x: from.x + NODE_WIDTH, y: from.y + NODE_HEIGHT / 2 };
    const end = { x: to.x, y: to.y + NODE_HEIGHT / 2 };
    // dagre's own ends sit on whichever side faces the other box, and it adds a bend in every gap between columns:
    // keep only the points inside the columns the edge crosses, so each end meets a side and the curve stays smooth.
    // (Typed here: dagre's declarations name their own files without extensions, which NodeNext resolution of the
    // tests' typecheck cannot follow.)
    const route: { points?: Point[] } = g.edge(edge.from, edge.to);
    const crossed = (route.points ?? []).filter((p) => p.x > start.x + RANK_GAP && p.x < end.x - RANK_GAP);
    return { ...edge, points: [start, ...crossed.map((p) => ({ x: p.x, y: p.y })), end] };
  });
  const size = g.graph();
  return { width: Math.ceil(size.width ?? 0), height: Math.ceil(size.height ?? 0), nodes, edges };
}
