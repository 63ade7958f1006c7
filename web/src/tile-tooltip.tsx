import type { RefObject } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { formatCount } from './format.js';
import { CONNECTION_WORDS, HEALTH_WORDS, zoneLabel, type Tile } from './tile-model.js';
import { TILE_TIP_ID } from './zone-tiles.js';

/** Space between a tile and its tooltip, px. */
const OFFSET_PX = 6;

/**
 * Puts the tooltip under the tile named `name` inside `container` (flipped above it when there is no room below in the
 * window), kept inside the container's width. Positions go through the CSSOM (`style.left`), which the page's strict
 * CSP allows, unlike style attributes.
 */
function place(tip: HTMLElement, container: HTMLElement, name: string): void {
  const anchor = container.querySelector(`[data-account="${CSS.escape(name)}"]`);
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
  const agent = tile?.agentId ? `agent ${tile.agentId}` : 'no agent';
  const standby = tile && tile.standbyAgents > 0 ? ` · ${formatCount(tile.standbyAgents)} standby` : '';
  return (
    <div ref={ref} id={TILE_TIP_ID} role="tooltip" class="tile-tip" hidden={!tile} data-tip-account={tile?.name ?? ''}>
      {tile && (
        <>
          <strong class="tip-name">{tile.name}</strong>
          <span>
            Zone {zoneLabel(tile.zone)} · {tile.state} · {CONNECTION_WORDS[tile.connection]} ({agent}
            {standby})
          </span>
          <span>Worst health: {HEALTH_WORDS[tile.health]}</span>
          <span data-tip="counts">{countsText(tile)}</span>
        </>
      )}
    </div>
  );
}
