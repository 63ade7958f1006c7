import type { RefObject } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { formatCount } from './format.js';
import { HEALTH_WORDS, zoneLabel, type Tile } from './tile-model.js';
import { TILE_TIP_ID } from './zone-tiles.js';

/** Space between a tile and its tooltip, px. */
const OFFSET_PX = 6;

/**
 * Puts the tooltip under the tile named `name` inside `container` (flipped above it when there is no room below in the
 * window), kept inside the container's width. Positions go through the CSSOM (`style.left`), which the page's strict
 * CSP allows, unlike style attributes.
 */
function place(tip: HTMLElement, container: HTMLElement, name: string): void {
  const anchor = container.querySelector(`[data-tile="${CSS.escape(name)}"]`);
  if (!anchor) return;
  const box = container.getBoundingClientRect();
  const at = anchor.getBoundingClientRect();
  const own = tip.getBoundingClientRect();
  const left = Math.max(0, Math.min(at.left - box.left, box.width - own.width));
  const below = at.bottom + OFFSET_PX + own.height <= window.innerHeight;
  const top = below ? at.bottom - box.top + OFFSET_PX : at.top - box.top - OFFSET_PX - own.height;
  tip.style.left = `${Math.round(left)}px`;
  tip.style.top = `${Math.round(top)}px`;
}

/** How the tile's account is connected, in words: its connection state and what it rests on. */
function connectionText(tile: Tile): string {
  const standby = tile.standbyAgents === 1 ? '1 standby agent' : `${formatCount(tile.standbyAgents)} standby agents`;
  switch (tile.connection) {
    case 'active':
      return `active: cached by agent ${tile.agentId || '—'}${tile.standbyAgents > 0 ? `, ${standby}` : ''}`;
    case 'standby':
      return `standby: its holder's lease lapsed, ${standby} to take over`;
    case 'stale':
      return 'stale: no agent keeps it current';
    case 'failed':
      return 'failed: see the account for the reason';
    case 'inactive':
      return tile.state === 'DELETING' ? 'inactive: being deleted' : 'inactive: deactivated by an admin';
  }
}

/** The workload counts of a tile in words, or why there are none. */
function countsText(tile: Tile): string {
  const c = tile.counts;
  if (!c) return 'No workloads cached';
  return `Healthy ${formatCount(c.healthy)} · Progressing ${formatCount(c.progressing)} · Degraded ${formatCount(c.degraded)} · Paused ${formatCount(c.paused)} · Unknown ${formatCount(c.unknown)}`;
}

/**
 * The one tooltip of the fleet tiles: the account's name, zone, state and connection, its agent, its worst health and
 * its workloads per health state. Shown for the tile under the pointer or with the keyboard focus (`tile`), hidden
 * when `tile` is undefined; Escape on a tile hides it (zone-tiles.tsx).
 */
export function TileTooltip({ tile, container }: { tile: Tile | undefined; container: RefObject<HTMLElement> }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (tile && ref.current && container.current) place(ref.current, container.current, tile.name);
  });
  return (
    <div ref={ref} id={TILE_TIP_ID} role="tooltip" class="tile-tip" hidden={!tile} data-tip-account={tile?.name ?? ''}>
      {tile && (
        <>
          <strong class="tip-name">{tile.name}</strong>
          <span>
            Zone {zoneLabel(tile.zone)} · {tile.state}, {connectionText(tile)}
          </span>
          <span>Worst health: {HEALTH_WORDS[tile.health]}</span>
          <span data-tip="counts">{countsText(tile)}</span>
        </>
      )}
    </div>
  );
}
