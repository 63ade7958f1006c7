/**
 * How large the fleet's tiles are drawn: the more accounts shown, the smaller the tiles, so 10 accounts read as named
 * cards and 5,000 still fit on one 1280 px screen (at 8 px a tile, 2 px apart, a 1250 px row holds 125 tiles: 5,000
 * tiles are 40 rows, about 400 px). tiles.css draws each size (`tiles-<size>` on the section); keep the two in step.
 */
export type TileSize = 'large' | 'medium' | 'small' | 'tiny';

/** The most tiles each size is used for (tiny: any number). */
const SIZE_LIMITS: readonly [TileSize, number][] = [
  ['large', 48],
  ['medium', 400],
  ['small', 1500],
];

/**
 * The size for `count` tiles shown at once (after the filter, so narrowing to a few names brings the named cards
 * back): large cards with the name up to 48, 20 px squares up to 400, 12 px up to 1,500, 8 px beyond.
 */
export function tileSizeFor(count: number): TileSize {
  for (const [size, limit] of SIZE_LIMITS) if (count <= limit) return size;
  return 'tiny';
}
