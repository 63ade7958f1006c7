import type { GraphEdge, GraphNode } from './relation-graph.js';

/**
 * The shapes of a laid-out graph, shared by the layout (graph-layout.ts, which the page loads only when it draws a
 * graph: dagre stays out of the first bundle), the keyboard moves (graph-keys.ts) and the drawing (graph-node.tsx),
 * which fits names to the box with fitName.
 */

/** A node's box: wide enough for a name of NAME_FIT characters at the graph's font size, tall enough for three lines. */
export const NODE_WIDTH = 240;
export const NODE_HEIGHT = 70;

/** Characters of a name that fit a node's box at the graph's font size; longer names lose their middle. */
const NAME_FIT = 26;

/** `name` shortened to `fit` characters with an ellipsis in the middle, so a Pod's distinguishing suffix stays. */
export function fitName(name: string, fit = NAME_FIT): string {
  if (name.length <= fit) return name;
  const tail = Math.floor((fit - 1) / 2);
  return `${name.slice(0, fit - 1 - tail)}…${name.slice(name.length - tail)}`;
}

/** A node with its box: `x`, `y` its top-left corner. */
export interface PlacedNode extends GraphNode {
  x: number;
  y: number;
}

/** A point of the drawing. */
export interface Point {
  x: number;
  y: number;
}

/**
 * An edge with its route: from the middle of the source's right side, through the points dagre placed in the columns
 * it crosses (an edge skipping a column), to the middle of the target's left side.
 */
export interface PlacedEdge extends GraphEdge {
  points: Point[];
}

/** A laid-out graph: the size of the drawing, its nodes and its edges. */
export interface GraphLayout {
  width: number;
  height: number;
  nodes: PlacedNode[];
  edges: PlacedEdge[];
}
