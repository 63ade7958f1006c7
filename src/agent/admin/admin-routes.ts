/**
 * The admin endpoints, each a function from a status snapshot and its query to a JSON answer (no I/O, so they are
 * tested without a server):
 *  - `/health`     readiness: 200 UP once connected and every account synced or reported, else 503 DOWN + reason;
 *  - `/livez`      liveness: always 200 while the process serves requests;
 *  - `/version`    agent version, Node version, config file;
 *  - `/status`     the whole snapshot;
 *  - `/accounts`   accounts, filtered (`name` substring, `dynamic`, `state` = verdict) and paged (`limit`, `offset`);
 *  - `/operations` operations running or waiting for a slot now (`account` filter);
 *  - `/watches`    one row per watch scope (`account`, `state` filters; paged), with counts by state.
 */
import type { AccountStatus, AgentStatus, WatchStatus } from '../status.js';
import { PAGING, page, parseQuery } from './admin-query.js';
import { readiness } from './readiness.js';

/** Facts about the process that do not change while it runs. */
export interface AdminInfo {
  agentId: string;
  version: string;
  /** The configuration file the agent was started with (undefined when configured in code). */
  configFile?: string;
}

/** What a route sees. */
export interface RouteContext {
  status: AgentStatus;
  query: URLSearchParams;
  info: AdminInfo;
  /** `Date.now()` of the request. */
  now: number;
}

/** A JSON answer. */
export interface RouteAnswer {
  code: number;
  body: unknown;
}

const VERDICTS = ['caching', 'standby', 'refused', 'unknown'] as const;
const WATCH_STATES = ['listing', 'watching', 'backoff', 'stopped'] as const satisfies readonly WatchStatus['state'][];

const iso = (ms: number) => new Date(ms).toISOString();
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function countStates(watches: readonly { state: WatchStatus['state'] }[]): Record<WatchStatus['state'], number> {
  const counts = { listing: 0, watching: 0, backoff: 0, stopped: 0 };
  for (const w of watches) counts[w.state]++;
  return counts;
}

function health({ status, query }: RouteContext): RouteAnswer {
  parseQuery(query, {});
  const r = readiness(status);
  if (r.ready) {
    return {
      code: 200,
      body: {
        status: 'UP',
        connected: r.connected,
        sessionId: r.sessionId,
        accounts: { ready: r.accounts.ready, total: r.accounts.total },
      },
    };
  }
  return { code: 503, body: { status: 'DOWN', reason: r.reason, connected: r.connected, sessionId: r.sessionId, accounts: r.accounts } };
}

function livez({ query }: RouteContext): RouteAnswer {
  parseQuery(query, {});
  return { code: 200, body: { status: 'UP' } };
}

function version({ query, info }: RouteContext): RouteAnswer {
  parseQuery(query, {});
  return { code: 200, body: { agentId: info.agentId, version: info.version, node: process.version, configFile: info.configFile ?? null } };
}

function statusRoute({ status, query }: RouteContext): RouteAnswer {
  parseQuery(query, {});
  return { code: 200, body: status };
}

/** One `/accounts` item: the account without its watch rows (see `/watches`), with a summary of them. */
function accountItem(account: AccountStatus) {
  return {
    name: account.name,
    source: account.source,
    verdict: account.verdict,
    ...(account.reason !== undefined ? { reason: account.reason } : {}),
    ...(account.error ? { error: account.error } : {}),
    synced: account.verdict === 'caching' && account.watches.every((w) => w.synced),
    watches: { total: account.watches.length, synced: account.watches.filter((w) => w.synced).length, ...countStates(account.watches) },
    skipped: account.skipped,
  };
}

function accounts({ status, query }: RouteContext): RouteAnswer {
  const q = parseQuery(query, {
    name: { type: 'string' },
    dynamic: { type: 'boolean' },
    state: { type: 'enum', values: VERDICTS },
    ...PAGING,
  });
  const needle = q.name?.toLowerCase();
  const matching = status.accounts
    .filter((a) => needle === undefined || a.name.toLowerCase().includes(needle))
    .filter((a) => q.dynamic === undefined || (a.source === 'dynamic') === q.dynamic)
    .filter((a) => q.state === undefined || a.verdict === q.state)
    .sort(byName);
  return { code: 200, body: page(matching.map(accountItem), q) };
}

function operations({ status, query, now }: RouteContext): RouteAnswer {
  const q = parseQuery(query, { account: { type: 'string' } });
  const items = status.operations.running
    .filter((op) => q.account === undefined || op.account === q.account)
    .map((op) => ({
      id: op.id,
      account: op.account,
      kind: op.kind,
      state: op.state,
      startedAt: iso(op.startedAt),
      elapsedMs: Math.max(0, now - op.startedAt),
    }));
  return { code: 200, body: { items, total: items.length, pendingResults: status.operations.pendingResults } };
}

function watches({ status, query }: RouteContext): RouteAnswer {
  const q = parseQuery(query, { account: { type: 'string' }, state: { type: 'enum', values: WATCH_STATES }, ...PAGING });
  const rows = [...status.accounts]
    .sort(byName)
    .filter((a) => q.account === undefined || a.name === q.account)
    .flatMap((a) => a.watches.map((w) => ({ account: a.name, ...w, startedAt: iso(w.startedAt) })));
  const states = countStates(rows);
  const matching = q.state === undefined ? rows : rows.filter((r) => r.state === q.state);
  return { code: 200, body: { ...page(matching, q), states } };
}

/** Every route by path. */
export const ADMIN_ROUTES: Readonly<Record<string, (ctx: RouteContext) => RouteAnswer>> = {
  '/health': health,
  '/livez': livez,
  '/version': version,
  '/status': statusRoute,
  '/accounts': accounts,
  '/operations': operations,
  '/watches': watches,
};
