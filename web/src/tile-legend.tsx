import { formatCount } from './format.js';
import { CONNECTIONS, CONNECTION_WORDS, HEALTH_WORDS, WORST_HEALTHS, type ZoneGroup } from './tile-model.js';

/** What each connection mark means, for the legend's tooltips and screen readers. */
const CONNECTION_HINTS = {
  active: 'a live agent caches it',
  standby: 'only a standby agent serves it until it takes over',
  stale: 'wanted, but no agent keeps it current (or the page lost the gateway)',
  failed: 'a change no agent confirmed, or a failed delete',
  inactive: 'deactivated by an admin, or being deleted',
} as const;

/**
 * The legend of the fleet tiles, with the whole fleet's counts: the fill is the worst workload health, the mark the
 * connection state (solid, half, hatched, crossed, hollow), so neither needs colour to be told apart. Its swatches are
 * drawn by the same classes as the tiles.
 */
export function TileLegend({ totals }: { totals: Pick<ZoneGroup, 'connections' | 'healths'> }) {
  return (
    <div class="tile-legend">
      <div>
        <p class="legend-title" id="legend-fill">
          Fill: worst workload health
        </p>
        <ul aria-labelledby="legend-fill">
          {WORST_HEALTHS.map((h) => (
            <li key={h} data-legend={h}>
              <span class={`swatch h-${h} c-active`} aria-hidden="true" /> {HEALTH_WORDS[h]}{' '}
              <span class="count">{formatCount(totals.healths[h])}</span>
            </li>
          ))}
        </ul>
      </div>
      <div>
        <p class="legend-title" id="legend-mark">
          Mark: connection
        </p>
        <ul aria-labelledby="legend-mark">
          {CONNECTIONS.map((c) => (
            <li key={c} data-legend={c} title={CONNECTION_HINTS[c]}>
              <span class={`swatch h-legend c-${c}`} aria-hidden="true" /> {CONNECTION_WORDS[c]}{' '}
              <span class="count">{formatCount(totals.connections[c])}</span>
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
