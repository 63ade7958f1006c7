import type { VNode } from 'preact';
import { useMemo, useRef, useState } from 'preact/hooks';
import { formatCount } from './format.js';
import { hrefFor } from './router.js';
import { CONNECTIONS, CONNECTION_WORDS, HEALTH_WORDS, WORST_HEALTHS, zoneLabel, type Tile, type ZoneGroup } from './tile-model.js';
import type { TileSize } from './tile-size.js';

/** Where a tooltip request comes from: the pointer over a tile, or the keyboard focus on one. */
export type TipSource = 'hover' | 'focus';

/** The id of the one tooltip of the tiles (tile-tooltip.tsx); the focusable tile of each zone is described by it. */
export const TILE_TIP_ID = 'tile-tip';

interface ZoneTilesProps {
  group: ZoneGroup;
  /** The zone's accounts before the filter. */
  total: number;
  size: TileSize;
  /** Position of the zone among those shown, for element ids. */
  index: number;
  /** Shows the tooltip of the named tile, or hides the one of `source` (null). Must be stable across renders. */
  onTip(name: string | null, source: TipSource): void;
}

/** A tile: a link to the account's page, drawn by tiles.css from its health (`h-`) and connection (`c-`) classes. */
function tileNode(tile: Tile, size: TileSize, focusable: boolean): VNode {
  const href = hrefFor(`accounts/${encodeURIComponent(tile.name)}`);
  const common = {
    'data-tile': tile.name,
    'data-tile-health': tile.health,
    'data-connection': tile.connection,
    tabIndex: focusable ? 0 : -1,
    'aria-describedby': focusable ? TILE_TIP_ID : undefined,
  };
  const words = [HEALTH_WORDS[tile.health], CONNECTION_WORDS[tile.connection]];
  if (size !== 'large') {
    return (
      <a
        key={tile.name}
        href={href}
        {...common}
        class={`tile swatch h-${tile.health} c-${tile.connection}`}
        aria-label={`${tile.name}: ${words.join(', ')}`}
      />
    );
  }
  return (
    <a key={tile.name} href={href} {...common} class="tile">
      <span class={`swatch h-${tile.health} c-${tile.connection}`} aria-hidden="true" />
      <span class="tile-text">
        <span class="tile-name">{tile.name}</span>
        <span class="tile-words">{words.join(' · ')}</span>
      </span>
    </a>
  );
}

/** The number of columns of a CSS grid as laid out now (its resolved tracks), at least 1. */
function columnsOf(grid: HTMLElement): number {
  return Math.max(1, getComputedStyle(grid).gridTemplateColumns.split(' ').filter(Boolean).length);
}

/** The tile a DOM event happened on, by name. */
function tileNameOf(target: EventTarget | null): string | null {
  const el = target instanceof Element ? target.closest('[data-tile]') : null;
  return el?.getAttribute('data-tile') ?? null;
}

/**
 * One zone of the fleet tiles: its heading with the counts, and its tiles as one keyboard stop (roving tabindex:
 * Tab enters on the last tile focused, arrows move by one or by a row, Home/End go to the ends, Enter opens the
 * account — the tiles are links). Rendering stays one pass over plain elements, and each tile's element is reused
 * while its health, connection and size stay the same (Preact skips an element it rendered before): a fleet change
 * re-renders the tiles it changed, moving the focus two tiles, a tooltip none.
 */
export function ZoneTiles({ group, total, size, index, onTip }: ZoneTilesProps) {
  const [chosen, setChosen] = useState<string | null>(null);
  const gridRef = useRef<HTMLDivElement>(null);
  const positions = useMemo(() => new Map(group.tiles.map((t, i) => [t.name, i])), [group.tiles]);
  const focusAt = (chosen !== null ? positions.get(chosen) : undefined) ?? 0;
  // Each tile's element is kept while its look is the same, so a fleet change re-renders only the tiles it changed.
  const built = useRef(new Map<string, { look: string; node: VNode }>());
  const nodes = useMemo(() => {
    const next = new Map<string, { look: string; node: VNode }>();
    const list = group.tiles.map((t) => {
      const look = `${t.health} ${t.connection} ${size}`;
      const kept = built.current.get(t.name);
      const node = kept && kept.look === look ? kept.node : tileNode(t, size, false);
      next.set(t.name, { look, node });
      return node;
    });
    built.current = next;
    return list;
  }, [group.tiles, size]);
  const focusable = useMemo(() => (group.tiles[focusAt] ? tileNode(group.tiles[focusAt], size, true) : null), [group.tiles, size, focusAt]);
  const titleId = `zone-tiles-${index}`;

  const onKeyDown = (e: KeyboardEvent) => {
    const grid = gridRef.current;
    const name = tileNameOf(e.target);
    if (!grid || name === null || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === 'Escape') {
      onTip(null, 'focus');
      onTip(null, 'hover');
      return;
    }
    const at = positions.get(name) ?? 0;
    const last = group.tiles.length - 1;
    const moves: Record<string, () => number> = {
      ArrowRight: () => at + 1,
      ArrowLeft: () => at - 1,
      ArrowDown: () => at + columnsOf(grid),
      ArrowUp: () => at - columnsOf(grid),
      Home: () => 0,
      End: () => last,
    };
    const move = moves[e.key];
    if (!move) return;
    e.preventDefault();
    const next = move();
    const target = group.tiles[next];
    if (!target || next === at) return; // past an edge (ArrowDown on the last row): stay
    setChosen(target.name);
    (grid.children[next] as HTMLElement | undefined)?.focus();
  };

  const counts = [
    ...CONNECTIONS.filter((c) => group.connections[c] > 0).map((c) => [c, group.connections[c], CONNECTION_WORDS[c]] as const),
    ...WORST_HEALTHS.filter((h) => group.healths[h] > 0).map((h) => [h, group.healths[h], HEALTH_WORDS[h]] as const),
  ];
  const shown = group.tiles.length;
  return (
    <div class="zone-tiles" data-zone={group.zone}>
      <h3 id={titleId}>
        {zoneLabel(group.zone)}{' '}
        <span class="zone-total" data-count="accounts">
          {shown === total ? `${formatCount(total)} accounts` : `${formatCount(shown)} of ${formatCount(total)} accounts`}
        </span>
      </h3>
      <ul class="zone-counts">
        {counts.map(([key, n, word]) => (
          <li key={key} data-count={key}>
            {word} <span class="count">{formatCount(n)}</span>
          </li>
        ))}
      </ul>
      {/* biome-ignore lint/a11y/useSemanticElements: a group of links moved through with the arrow keys, not form fields (fieldset) */}
      <div
        ref={gridRef}
        class="tile-grid"
        role="group"
        aria-labelledby={titleId}
        onKeyDown={onKeyDown}
        onPointerOver={(e) => {
          const name = tileNameOf(e.target);
          if (name !== null) onTip(name, 'hover');
        }}
        onPointerLeave={() => onTip(null, 'hover')}
        onFocusIn={(e) => {
          const name = tileNameOf(e.target);
          if (name === null) return;
          if (name !== chosen) setChosen(name);
          onTip(name, 'focus');
        }}
        onFocusOut={() => onTip(null, 'focus')}
      >
        {nodes.map((node, i) => (i === focusAt ? focusable : node))}
      </div>
    </div>
  );
}
