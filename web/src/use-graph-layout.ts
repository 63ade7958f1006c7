import { useEffect, useState } from 'preact/hooks';
import type { GraphLayout } from './graph-geometry.js';
import type { RelationGraph } from './relation-graph.js';

/** A layout, or why there is none. */
interface LayoutState {
  layout?: GraphLayout;
  error?: unknown;
}

/**
 * Lays `graph` out with dagre (graph-layout.ts), loaded on first use so that only pages drawing a graph download it.
 * Until the first layout is ready `layout` is undefined; when the graph changes the previous layout stays shown until
 * the new one replaces it (nothing flickers on a refresh). Pass undefined for no graph: nothing is loaded. `error` is
 * set when the module could not be loaded or the layout threw; callers then show the list instead.
 */
export function useGraphLayout(graph: RelationGraph | undefined): LayoutState {
  const [state, setState] = useState<LayoutState>({});
  useEffect(() => {
    if (!graph) return undefined;
    let current = true;
    import('./graph-layout.js')
      .then(({ layoutGraph }) => {
        if (current) setState({ layout: layoutGraph(graph) });
      })
      .catch((error: unknown) => current && setState({ error }));
    return () => {
      current = false;
    };
  }, [graph]);
  return state;
}
