import { CONNECTIONS, WORST_HEALTHS, type Connection, type Tile, type WorstHealth } from './tile-model.js';

/**
 * The filter box of the fleet tiles: words separated by spaces, every word must match (AND), case-insensitive.
 * - `text` (no prefix, or `name:text`): the account's name contains it;
 * - `zone:text`: the zone id contains it (`zone:none` also matches accounts without a zone);
 * - `state:word`: a connection state (active, standby, stale, failed, inactive), or else the account's own state
 *   (ACTIVATING, DELETE_FAILED…), exactly;
 * - `health:word`: the worst workload health (degraded, progressing, paused, unknown, healthy, none), exactly.
 * A prefix with an empty value is ignored while it is being typed.
 */
export interface TileFilter {
  /** True when the text holds at least one word (so the count reads "n of m"). */
  active: boolean;
  /** Words whose value cannot match anything (`health:bad`), quoted as typed, for a hint under the box. */
  invalid: string[];
  /** Whether a tile passes every word. */
  matches(tile: Tile): boolean;
}

type Check = (tile: Tile) => boolean;

const CONNECTION_SET = new Set<string>(CONNECTIONS);
const HEALTH_SET = new Set<string>(WORST_HEALTHS);
/** Account states (docs/accounts.md); values outside them and the connection words cannot match. */
const ACCOUNT_STATES = new Set([
  'inactive',
  'activating',
  'active',
  'to_migrate',
  'deactivating',
  'to_deactivate',
  'deleting',
  'delete_failed',
  'failed',
  'orphaned',
]);

/** One word's check, or a string when its value cannot match anything. */
function checkOf(word: string): Check | string | undefined {
  const colon = word.indexOf(':');
  const key = colon > 0 ? word.slice(0, colon) : '';
  const value = colon > 0 ? word.slice(colon + 1) : word;
  switch (key) {
    case '':
    case 'name':
      return value === '' ? undefined : (t) => t.name.toLowerCase().includes(value);
    case 'zone':
      if (value === '') return undefined;
      return (t) => t.zone.toLowerCase().includes(value) || (value === 'none' && t.zone === '');
    case 'state':
      if (value === '') return undefined;
      if (CONNECTION_SET.has(value)) return (t) => t.connection === (value as Connection);
      if (ACCOUNT_STATES.has(value)) return (t) => t.state.toLowerCase() === value;
      return word;
    case 'health':
      if (value === '') return undefined;
      return HEALTH_SET.has(value) ? (t) => t.health === (value as WorstHealth) : word;
    default:
      return (t) => t.name.toLowerCase().includes(word);
  }
}

/** Parses the filter box's text (see {@link TileFilter}); never throws. */
export function parseTileFilter(text: string): TileFilter {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  const checks: Check[] = [];
  const invalid: string[] = [];
  for (const word of words) {
    const check = checkOf(word);
    if (typeof check === 'string') invalid.push(check);
    else if (check) checks.push(check);
  }
  return {
    active: words.length > 0,
    invalid,
    matches: invalid.length > 0 ? () => false : (tile) => checks.every((c) => c(tile)),
  };
}
