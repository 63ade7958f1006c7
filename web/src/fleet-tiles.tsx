import { useCallback, useMemo, useRef, useState } from 'preact/hooks';
import { ErrorMessage } from './error-message.js';
import { accountsSignal } from './fleet-signals.js';
import { formatCount } from './format.js';
import { sharedHealthSummary } from './health-summary-source.js';
import { useServices } from './services.js';
import { parseTileFilter } from './tile-filter.js';
import { TileLegend } from './tile-legend.js';
import { buildTiles, groupByZone, tally } from './tile-model.js';
import { tileSizeFor } from './tile-size.js';
import { TileTooltip } from './tile-tooltip.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';
import { ZoneTiles, type TipSource } from './zone-tiles.js';
import './styles/tiles.css';

/** Which tile the tooltip is for: the one under the pointer wins over the focused one; Escape dismisses both. */
interface TipState {
  hover: string | null;
  focus: string | null;
}

/**
 * The overview's "Fleet at a glance": every account as a tile filled by its worst workload health and marked by its
 * connection state (tile-model.ts), one grid per zone, tiles shrinking with their number (tile-size.ts), a tooltip
 * naming the tile under the pointer or the focus, a legend with the fleet's counts, and a filter box (tile-filter.ts).
 * The accounts come from the WatchFleet summary; the health from SummarizeHealth, fetched again only when the
 * summary's accounts signal changes and shared with the health table (health-summary-source.ts). While the page's
 * data is stale, no tile claims to be connected.
 */
export function FleetTiles() {
  const services = useServices();
  const { fleet, lostAt } = useFleet();
  const trigger = useMemo(() => accountsSignal(fleet, null), [fleet]);
  const health = useLiveQuery('health-summary', () => sharedHealthSummary(services, trigger), trigger);
  const [text, setText] = useState('');
  const [tip, setTip] = useState<TipState>({ hover: null, focus: null });
  const containerRef = useRef<HTMLElement>(null);

  const pageStale = lostAt !== null;
  const tiles = useMemo(() => (fleet ? buildTiles(fleet.accounts, health.data, pageStale) : []), [fleet, health.data, pageStale]);
  const filter = useMemo(() => parseTileFilter(text), [text]);
  const shown = useMemo(() => (filter.active ? tiles.filter(filter.matches) : tiles), [tiles, filter]);
  const groups = useMemo(() => groupByZone(shown), [shown]);
  const totals = useMemo(() => tally(tiles), [tiles]);
  const zoneTotals = useMemo(() => {
    const counts = new Map<string, number>();
    for (const t of tiles) counts.set(t.zone, (counts.get(t.zone) ?? 0) + 1);
    return counts;
  }, [tiles]);
  const size = tileSizeFor(shown.length);

  const onTip = useCallback((name: string | null, source: TipSource) => {
    setTip((prev) => (prev[source] === name ? prev : { ...prev, [source]: name }));
  }, []);
  // The zones' elements are built once per change of the tiles, so a tooltip moving over them re-renders none.
  const zones = useMemo(
    () =>
      groups.map((g, i) => <ZoneTiles key={g.zone} group={g} total={zoneTotals.get(g.zone) ?? 0} size={size} index={i} onTip={onTip} />),
    [groups, zoneTotals, size, onTip],
  );
  const tipName = tip.hover ?? tip.focus;
  const tipTile = tipName === null ? undefined : shown.find((t) => t.name === tipName);

  return (
    <section ref={containerRef} class={`fleet-tiles tiles-${size}`} aria-labelledby="tiles-title">
      <h2 id="tiles-title">Fleet at a glance</h2>
      <div class="tiles-bar">
        <div class="field">
          <label for="tiles-filter">Filter accounts</label>
          <input
            id="tiles-filter"
            type="search"
            autocomplete="off"
            spellcheck={false}
            value={text}
            placeholder="name, zone:…, state:…, health:…"
            aria-describedby="tiles-filter-help"
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </div>
        <p class="tiles-count" role="status" data-count="shown">
          {filter.active
            ? `${formatCount(shown.length)} of ${formatCount(tiles.length)} accounts match`
            : `${formatCount(tiles.length)} accounts`}
        </p>
      </div>
      <p class="hint" id="tiles-filter-help">
        Words must all match: part of a name, <code>zone:</code> part of a zone (<code>zone:none</code> for none), <code>state:</code>{' '}
        active, standby, stale, failed, inactive or an account state, <code>health:</code> degraded, progressing, paused, unknown, healthy
        or none. Arrow keys move between tiles, Enter opens the account.
      </p>
      {filter.invalid.length > 0 && <p class="error">Nothing can match {filter.invalid.join(', ')}.</p>}
      <TileLegend totals={totals} />
      <ErrorMessage error={health.error} context="Could not load the workload health" />
      {!health.data && health.busy && <p class="loading">Loading the workload health…</p>}
      {tiles.length === 0 ? (
        <p class="empty">No accounts yet.</p>
      ) : shown.length === 0 ? (
        <p class="empty">No account matches the filter.</p>
      ) : (
        zones
      )}
      <TileTooltip tile={tipTile} container={containerRef} />
    </section>
  );
}
