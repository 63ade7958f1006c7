import type { AccountActivity } from '../../src/gen/outpost/api/v1/fleet_service_pb.js';
import type { AccountHealth } from '../../src/gen/outpost/api/v1/object_service_pb.js';

/**
 * The fleet at a glance, as data: one tile per account with its worst workload health and its connection state,
 * grouped by zone. Pure functions of the fleet summary (WatchFleet) and the health summary (SummarizeHealth), so
 * the overview's tiles (fleet-tiles.tsx) and their tests agree on every rule.
 */

/** An account's worst workload health, worst first; `none` when it caches no workload (or the counts are not in). */
export type WorstHealth = 'degraded' | 'progressing' | 'paused' | 'unknown' | 'healthy' | 'none';

/** Every worst health, in the order of the legend (worst first). */
export const WORST_HEALTHS: readonly WorstHealth[] = ['degraded', 'progressing', 'paused', 'unknown', 'healthy', 'none'];

/** The words shown for each worst health. */
export const HEALTH_WORDS: Record<WorstHealth, string> = {
  degraded: 'Degraded',
  progressing: 'Progressing',
  paused: 'Paused',
  unknown: 'Unknown',
  healthy: 'Healthy',
  none: 'No workloads',
};

/**
 * How an account is connected, as {@link connectionOf} decides: `active` (a live agent caches it), `standby` (only
 * standing-by streams serve it while its lease lapses), `stale` (wanted, but nothing keeps its cache current),
 * `failed` (a change no agent confirmed, or a failed delete) and `inactive` (deliberately not served).
 */
export type Connection = 'active' | 'standby' | 'stale' | 'failed' | 'inactive';

/** Every connection state, in the order of the legend. */
export const CONNECTIONS: readonly Connection[] = ['active', 'standby', 'stale', 'failed', 'inactive'];

/** The words shown for each connection state. */
export const CONNECTION_WORDS: Record<Connection, string> = {
  active: 'Active',
  standby: 'Standby',
  stale: 'Stale',
  failed: 'Failed',
  inactive: 'Inactive',
};

/** Workloads per health state, as SummarizeHealth counts them. */
export type HealthTally = Pick<AccountHealth, 'healthy' | 'progressing' | 'degraded' | 'paused' | 'unknown'>;

/** One account's tile. */
export interface Tile {
  name: string;
  /** The zone id; '' when the account has none. */
  zone: string;
  /** The account's state (ACTIVE, INACTIVE, FAILED…). */
  state: string;
  connection: Connection;
  health: WorstHealth;
  /** Its workloads per health state; undefined when it caches none (or the counts are not loaded). */
  counts: HealthTally | undefined;
  agentId: string;
  standbyAgents: number;
}

/** A zone's tiles, by name, and how many of them are in each state. */
export interface ZoneGroup {
  zone: string;
  tiles: Tile[];
  connections: Record<Connection, number>;
  healths: Record<WorstHealth, number>;
}

/** The name a zone is shown by: '' reads "No zone". */
export function zoneLabel(zone: string): string {
  return zone === '' ? 'No zone' : zone;
}

/** The worst health among an account's workloads: Degraded > Progressing > Paused > Unknown > Healthy; none: `none`. */
export function worstHealth(counts: HealthTally | undefined): WorstHealth {
  if (!counts) return 'none';
  for (const h of ['degraded', 'progressing', 'paused', 'unknown', 'healthy'] as const) if (counts[h] > 0) return h;
  return 'none';
}

/** States that mean a change failed (docs/accounts.md): an activation, deactivation or delete no agent confirmed. */
const FAILED_STATES = new Set(['FAILED', 'DELETE_FAILED', 'ORPHANED']);

/**
 * An account's connection state, from its fleet summary entry and whether the page's data is stale (the WatchFleet
 * stream is lost: `FleetStatus.lostAt` set). First match wins:
 * 1. FAILED, DELETE_FAILED, ORPHANED → `failed`;
 * 2. DELETING, or an admin deactivated it (`desiredState` INACTIVE) and no stream serves it → `inactive`;
 * 3. a live lease holder caches it (`leased`) → `active`;
 * 4. otherwise a live stream stands by for it (`standbyAgents` > 0: its holder stopped renewing the lease and the
 *    standby takes over when it lapses) → `standby`;
 * 5. otherwise → `stale`: it is wanted ACTIVE but no agent keeps its cache current (INACTIVE after its agent left,
 *    ACTIVATING with no agent yet, or a streamed state whose holder's lease lapsed with nobody to take over).
 * Active and standby become `stale` while the page itself is stale: nothing proves the agent is still there.
 * "No event for a long time" is deliberately not a rule: an idle cluster sends no event for hours while connected;
 * the lease, renewed every few seconds by the holder's replica, is the liveness signal.
 */
export function connectionOf(
  account: Pick<AccountActivity, 'state' | 'desiredState' | 'leased' | 'standbyAgents'>,
  pageStale: boolean,
): Connection {
  if (FAILED_STATES.has(account.state)) return 'failed';
  const served = account.leased || account.standbyAgents > 0;
  if (account.state === 'DELETING' || (account.desiredState === 'INACTIVE' && !served)) return 'inactive';
  if (pageStale) return 'stale';
  if (account.leased) return 'active';
  if (account.standbyAgents > 0) return 'standby';
  return 'stale';
}

/**
 * The tiles of every account of the summary, in its order (by name). `health` is SummarizeHealth's answer
 * (accounts without workloads are absent from it); undefined while it is not loaded, which leaves every tile `none`.
 */
export function buildTiles(accounts: readonly AccountActivity[], health: readonly AccountHealth[] | undefined, pageStale: boolean): Tile[] {
  const byName = new Map<string, HealthTally>();
  for (const h of health ?? []) byName.set(h.account, h);
  return accounts.map((a) => {
    const counts = byName.get(a.name);
    return {
      name: a.name,
      zone: a.zone,
      state: a.state,
      connection: connectionOf(a, pageStale),
      health: worstHealth(counts),
      counts,
      agentId: a.agentId,
      standbyAgents: a.standbyAgents,
    };
  });
}

/** Zero for every key of `keys`. */
function zeros<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

/** How many of `tiles` are in each connection and health state (the legend's and the zone headings' counts). */
export function tally(tiles: readonly Tile[]): Pick<ZoneGroup, 'connections' | 'healths'> {
  const connections = zeros(CONNECTIONS);
  const healths = zeros(WORST_HEALTHS);
  for (const t of tiles) {
    connections[t.connection]++;
    healths[t.health]++;
  }
  return { connections, healths };
}

/** `tiles` grouped by zone: zones by name with "No zone" ('') last, tiles in their given order, with their counts. */
export function groupByZone(tiles: readonly Tile[]): ZoneGroup[] {
  const zones = new Map<string, Tile[]>();
  for (const t of tiles) {
    let list = zones.get(t.zone);
    if (!list) zones.set(t.zone, (list = []));
    list.push(t);
  }
  return [...zones.entries()]
    .sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a < b ? -1 : a > b ? 1 : 0))
    .map(([zone, list]) => ({ zone, tiles: list, ...tally(list) }));
}
