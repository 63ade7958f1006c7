import { useEffect, useRef, useState } from 'preact/hooks';
import { nextNodeId } from './graph-keys.js';
import { type GraphLayout, NODE_WIDTH, type PlacedEdge } from './graph-geometry.js';
import { GraphNodeView } from './graph-node.js';

/** The SVG path of an edge: through its points, each step an S-curve leaving and arriving horizontally. */
function edgePath(points: PlacedEdge['points']): string {
  const [first, ...rest] = points;
  if (!first) return '';
  let d = `M${first.x} ${first.y}`;
  let at = first;
  for (const p of rest) {
    const mid = (at.x + p.x) / 2;
    d += ` C${mid} ${at.y} ${mid} ${p.y} ${p.x} ${p.y}`;
    at = p;
  }
  return d;
}

/** The three ways an edge is drawn, as the legend under the graph explains them. */
const LEGEND = [
  ['owns', 'owns (ownerReferences)'],
  ['selects', 'selects (a Service’s label selector)'],
  ['names', 'names (an Ingress’s backend, an HPA’s target, a Service’s Endpoints)'],
] as const;

/**
 * The object page's relations drawn as a left-to-right SVG graph from a dagre layout, with one tab stop: Tab reaches
 * one node (the page's object, or the node focused last), the arrow keys move along edges (Left, Right) and within a
 * column (Up, Down), Home returns to the page's object, Enter or a click opens a cached node's page. Edges have no
 * name, so assistive technology skips them: the list the section keeps after the graph says the same in words. Tests find edges by `data-edge="Kind/name Kind/name"` (from, to). The drawing keeps its natural size and scrolls sideways inside its own box when the window is narrower.
 */
export function RelationGraphView({ layout, labelledBy }: { layout: GraphLayout; labelledBy: string }) {
  const center = layout.nodes.find((n) => n.center)?.id;
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  const active = chosen && layout.nodes.some((n) => n.id === chosen) ? chosen : center;
  const svg = useRef<SVGSVGElement>(null);
  const box = useRef<HTMLDivElement>(null);

  // A narrow box starts scrolled to the page's object (on a phone the owners on its left would push it out of view).
  const centerX = layout.nodes.find((n) => n.center)?.x ?? 0;
  useEffect(() => {
    const el = box.current;
    if (el) el.scrollLeft = Math.max(0, centerX - (el.clientWidth - NODE_WIDTH) / 2);
  }, []);

  const onKeyDown = (event: KeyboardEvent) => {
    if (!active || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const next = nextNodeId(layout, active, event.key);
    if (!next) return;
    event.preventDefault();
    setChosen(next);
    svg.current?.querySelector<SVGElement>(`[data-graph-node="${CSS.escape(next)}"]`)?.focus();
  };

  return (
    <div class="graph">
      <div class="graph-scroll" ref={box}>
        {/* biome-ignore lint/a11y/useSemanticElements: an SVG drawing has no fieldset; the group names its nodes' set */}
        <svg
          ref={svg}
          class="graph-drawing"
          role="group"
          aria-labelledby={labelledBy}
          aria-describedby="graph-keys"
          width={layout.width}
          height={layout.height}
          viewBox={`0 0 ${layout.width} ${layout.height}`}
          onKeyDown={onKeyDown}
        >
          <defs>
            <marker id="graph-arrow" viewBox="0 0 10 10" refX={9} refY={5} markerWidth={8} markerHeight={8} orient="auto-start-reverse">
              <path d="M0 0 L10 5 L0 10 Z" class="graph-arrow" />
            </marker>
          </defs>
          <g>
            {layout.edges.map((e) => (
              <path
                key={`${e.from} ${e.to}`}
                class={`graph-edge edge-${e.kind}`}
                data-edge={`${e.from} ${e.to}`}
                d={edgePath(e.points)}
                marker-end="url(#graph-arrow)"
              />
            ))}
          </g>
          {layout.nodes.map((n) => (
            <GraphNodeView key={n.id} node={n} tabIndex={n.id === active ? 0 : -1} onFocus={setChosen} />
          ))}
        </svg>
      </div>
      <p id="graph-keys" class="hint">
        Arrow keys move between objects: Left and Right along the edges, Up and Down within a column, Home back to this page’s object. Enter
        opens the object’s page.
      </p>
      <ul class="graph-legend" aria-label="Edges">
        {LEGEND.map(([kind, text]) => (
          <li key={kind}>
            <svg width="36" height="10" aria-hidden="true">
              <path class={`graph-edge edge-${kind}`} d="M2 5 L34 5" />
            </svg>
            {text}
          </li>
        ))}
      </ul>
    </div>
  );
}
