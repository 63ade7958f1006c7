import { useMemo, useState } from 'preact/hooks';
import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { ErrorMessage } from './error-message.js';
import { accountsSignal } from './fleet-signals.js';
import { relationGraph } from './relation-graph.js';
import { RelationGraphView } from './relation-graph-view.js';
import { RelationsList } from './relations-list.js';
import { loadRelations, type Relations } from './relations-load.js';
import { useServices } from './services.js';
import { useGraphLayout } from './use-graph-layout.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';

/** Past this many objects the graph is not drawn (a column of hundreds of Pods reads better as a list). */
const MAX_DRAWN = 150;
/** Where the choice of view is kept, so someone who prefers the list keeps it from page to page. */
const VIEW_KEY = 'outpost.relationsView';

type View = 'graph' | 'list';

function storedView(): View {
  try {
    return window.localStorage.getItem(VIEW_KEY) === 'list' ? 'list' : 'graph';
  } catch {
    return 'graph';
  }
}

function storeView(view: View): void {
  try {
    window.localStorage.setItem(VIEW_KEY, view);
  } catch {
    // Storage refused (private mode, policy): the choice holds for this page only.
  }
}

/** The Graph / List switch: two toggle buttons, the pressed one naming the view shown. */
function ViewToggle({ view, choose }: { view: View; choose: (view: View) => void }) {
  return (
    <fieldset class="view-toggle">
      <legend class="visually-hidden">Show the relations as</legend>
      {(['graph', 'list'] as const).map((v) => (
        <button key={v} type="button" class="small" aria-pressed={view === v} onClick={() => choose(v)}>
          {v === 'graph' ? 'Graph' : 'List'}
        </button>
      ))}
    </fieldset>
  );
}

/**
 * The object page's "Relations" section, from the cache (relations-load.ts): the object's owners, dependents,
 * selectors and references drawn as a graph (relation-graph-view.tsx), with the same relations as lists after it —
 * visually hidden and out of the tab order while the graph shows (screen readers read them), shown instead of the
 * graph after "List" (a choice kept in localStorage) or when the graph would be too large to draw. Fetched again
 * whenever the object's account receives events. Renders nothing for an object related to nothing.
 */
export function ObjectRelations({ object }: { object: KubernetesObject }) {
  const { api } = useServices();
  const { fleet } = useFleet();
  const [view, setView] = useState<View>(storedView);
  const key = JSON.stringify([object.account, object.kind, object.namespace, object.name, object.uid]);
  const query = useLiveQuery<Relations>(key, (signal) => loadRelations(api, object, signal), accountsSignal(fleet, [object.account]));
  const data = query.data;
  const graph = useMemo(() => (data ? relationGraph(object, data) : undefined), [object, data]);
  const drawable = !!graph && graph.nodes.length <= MAX_DRAWN;
  const { layout, error: layoutError } = useGraphLayout(drawable && view === 'graph' ? graph : undefined);
  if (!data && !query.error) return null;
  if (graph && graph.nodes.length <= 1) return null;

  const choose = (v: View) => {
    setView(v);
    storeView(v);
  };
  const showGraph = view === 'graph' && !!layout;
  return (
    <section class="panel relations" aria-labelledby="relations-title">
      <div class="relations-head">
        <h2 id="relations-title">Relations</h2>
        {drawable && !layoutError && <ViewToggle view={view} choose={choose} />}
      </div>
      <ErrorMessage error={query.error} context="Could not load the relations" />
      <ErrorMessage error={layoutError} context="Could not draw the graph; the relations are listed instead" />
      {graph && !drawable && <p class="muted">{graph.nodes.length} objects are too many to draw: they are listed here.</p>}
      {showGraph && <RelationGraphView layout={layout} labelledBy="relations-title" />}
      {data && (
        <div class={showGraph ? 'visually-hidden' : undefined}>
          <RelationsList relations={data} focusable={!showGraph} />
        </div>
      )}
    </section>
  );
}
