import type { GraphLayout, PlacedNode } from './graph-geometry.js';

/**
 * Where a key moves the focus in a laid-out graph, from the node `from`: Right to a node it points at (a dependent,
 * a selected Pod), Left to one pointing at it (an owner, a selecting Service) — of several, the one nearest in height;
 * Down and Up to the next node below or above in the same column; Home to the page's object. Undefined when the key
 * moves nowhere (no such neighbour, another key): the caller then leaves the focus and the key's default alone.
 */
export function nextNodeId(graph: GraphLayout, from: string, key: string): string | undefined {
  const current = graph.nodes.find((n) => n.id === from);
  if (!current) return undefined;
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const nearest = (ids: string[]) =>
    ids
      .map((id) => byId.get(id))
      .filter((n): n is PlacedNode => n !== undefined)
      .sort((a, b) => Math.abs(a.y - current.y) - Math.abs(b.y - current.y) || a.y - b.y)[0]?.id;
  switch (key) {
    case 'ArrowRight':
      return nearest(graph.edges.filter((e) => e.from === from).map((e) => e.to));
    case 'ArrowLeft':
      return nearest(graph.edges.filter((e) => e.to === from).map((e) => e.from));
    case 'ArrowDown':
    case 'ArrowUp': {
      const column = graph.nodes.filter((n) => Math.abs(n.x - current.x) < 1).sort((a, b) => a.y - b.y);
      const at = column.findIndex((n) => n.id === from);
      return column[key === 'ArrowDown' ? at + 1 : at - 1]?.id;
    }
    case 'Home':
      return graph.nodes.find((n) => n.center)?.id;
    default:
      return undefined;
  }
}
