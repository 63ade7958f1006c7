import { GraphHealthMark } from './graph-health-mark.js';
import { fitName, NODE_HEIGHT, NODE_WIDTH, type PlacedNode } from './graph-geometry.js';
import { healthWord } from './health-badge.js';
import { objectHref } from './object-href.js';

/** Space between a node's border and its text. */
const PAD = 12;

/** What a screen reader says for a node: kind, full name, health, whether it is this page or not in the cache. */
function nodeLabel(node: PlacedNode): string {
  const state = node.object ? (healthWord(node.object.health) ?? 'no health rules') : 'not in the cache';
  return `${node.kind} ${node.name}, ${state}${node.center ? ', this page' : ''}`;
}

/** The tooltip: the full name and the health's reason, which the box has no room for. */
function nodeTitle(node: PlacedNode): string {
  const reason = node.object?.health?.reason;
  const word = healthWord(node.object?.health);
  return `${node.kind} ${node.name}${word ? `\n${word}${reason ? `: ${reason}` : ''}` : ''}`;
}

/**
 * One object of the graph at its place: a rounded box with its kind, its name and its health mark; the page's object
 * drawn with a thick border and a tinted fill and saying "this page". A cached object is a link to its page (Enter
 * or a click opens it); an object only named by another (not in the cache) is a dashed box that opens nothing, yet
 * focusable like the others so the arrow keys can pass through it. `tabIndex` is the roving tab stop's: 0 for the
 * one node Tab reaches, -1 for the others. Tests find nodes by `data-graph-node="Kind/name"`.
 */
export function GraphNodeView({ node, tabIndex, onFocus }: { node: PlacedNode; tabIndex: 0 | -1; onFocus: (id: string) => void }) {
  const classes = `graph-node${node.center ? ' is-center' : ''}${node.object ? '' : ' is-missing'}`;
  const body = (
    <>
      <title>{nodeTitle(node)}</title>
      <rect class="graph-focus-ring" x={-5} y={-5} width={NODE_WIDTH + 10} height={NODE_HEIGHT + 10} rx={10} />
      <rect class="graph-box" width={NODE_WIDTH} height={NODE_HEIGHT} rx={7} />
      <text x={PAD} y={21} class="graph-kind">
        {node.kind}
      </text>
      {node.center && (
        <text x={NODE_WIDTH - PAD} y={21} class="graph-kind graph-this" text-anchor="end">
          this page
        </text>
      )}
      <text x={PAD} y={41} class="graph-name">
        {fitName(node.name)}
      </text>
      {node.object ? (
        <GraphHealthMark health={node.object.health} x={PAD} y={60} />
      ) : (
        <text x={PAD} y={60} class="graph-muted">
          not in the cache
        </text>
      )}
    </>
  );
  const common = {
    class: classes,
    transform: `translate(${node.x} ${node.y})`,
    'data-graph-node': node.id,
    'aria-label': nodeLabel(node),
    tabindex: tabIndex,
    onFocus: () => onFocus(node.id),
  };
  return node.object ? (
    <a {...common} href={objectHref(node.object)} aria-current={node.center ? 'page' : undefined}>
      {body}
    </a>
  ) : (
    // biome-ignore lint/a11y/noInteractiveElementToNoninteractiveRole: it opens nothing; focusable only for the arrow keys
    <g {...common} role="img">
      {body}
    </g>
  );
}
