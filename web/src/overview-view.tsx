import type { AccountActivity } from '../../src/gen/outpost/api/v1/fleet_service_pb.js';
import { ErrorMessage } from './error-message.js';
import { FleetTiles } from './fleet-tiles.js';
import { HealthCounts } from './health-counts.js';
import { HistoryCharts } from './history-charts.js';
import { formatCount, formatRate } from './format.js';
import { PageTitle } from './page-title.js';
import { RecentOperations } from './recent-operations.js';
import { hrefFor } from './router.js';
import { StateBadge } from './state-badge.js';
import { TableScroll } from './table-scroll.js';
import { TimeText } from './time-text.js';
import { useFleet } from './use-fleet.js';

/** Rows of the Account activity table: a fleet of thousands is read from the tiles, not from one long table. */
const ACTIVITY_ROWS = 25;

/** The `limit` accounts with the latest events (those without any last, by name), newest first. */
function latestActive(accounts: readonly AccountActivity[], limit: number): AccountActivity[] {
  if (accounts.length <= limit) return [...accounts];
  const at = (a: AccountActivity) => (a.lastEventTime ? Number(a.lastEventTime.seconds) * 1000 + a.lastEventTime.nanos / 1e6 : -1);
  return [...accounts].sort((a, b) => at(b) - at(a) || a.name.localeCompare(b.name)).slice(0, limit);
}

/**
 * The fleet at a glance, from the WatchFleet stream: headline numbers, gateway replicas, accounts by state and
 * activity, and the newest operations (whose targets RecentOperations reads with ListOperations). Re-renders on
 * every summary.
 */
export function OverviewView() {
  const { fleet, error } = useFleet();
  if (!fleet) {
    return (
      <>
        <PageTitle title="Overview" />
        {error ? (
          <ErrorMessage error={error} context="Could not load the fleet summary" />
        ) : (
          <p class="loading">Loading the fleet summary…</p>
        )}
      </>
    );
  }
  const states = Object.entries(fleet.accountsByState).sort(([a], [b]) => a.localeCompare(b));
  const accountCount = states.reduce((sum, [, n]) => sum + n, 0);
  const recent = latestActive(fleet.accounts, ACTIVITY_ROWS);

  return (
    <>
      <PageTitle title="Overview" />
      <p class="muted">
        Summary as of <TimeText ts={fleet.time} />.
      </p>
      <dl class="stats">
        <div>
          <dt>Connected agents</dt>
          <dd>{formatCount(fleet.connectedAgents)}</dd>
        </div>
        <div>
          <dt>Accounts</dt>
          <dd>{formatCount(accountCount)}</dd>
        </div>
        <div>
          <dt>Events per second</dt>
          <dd>{formatRate(fleet.eventsPerSecond)}</dd>
        </div>
        <div>
          <dt>Operations in flight</dt>
          <dd>{formatCount(fleet.operationsInFlight)}</dd>
        </div>
      </dl>

      <FleetTiles />

      <HistoryCharts />

      <section aria-labelledby="replicas-title">
        <h2 id="replicas-title">Gateway replicas</h2>
        <TableScroll label="Gateway replicas table">
          <table>
            <thead>
              <tr>
                <th scope="col">ID</th>
                <th scope="col">URL</th>
                <th scope="col">Ready</th>
                <th scope="col" class="num">
                  Agents
                </th>
                <th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {fleet.replicas.length === 0 && (
                <tr>
                  <td colSpan={5} class="empty">
                    No replica has registered.
                  </td>
                </tr>
              )}
              {fleet.replicas.map((r) => (
                <tr key={r.id}>
                  <th scope="row" class="mono">
                    {r.id}
                  </th>
                  <td class="mono">{r.baseUrl || '—'}</td>
                  <td>
                    <StateBadge state={r.ready ? 'READY' : 'NOT READY'} />
                  </td>
                  <td class="num">{formatCount(r.connectedAgents)}</td>
                  <td>
                    <TimeText ts={r.lastSeenTime} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </section>

      <section aria-labelledby="account-states-title">
        <h2 id="account-states-title">Accounts by state</h2>
        {states.length === 0 ? (
          <p class="empty">No accounts yet.</p>
        ) : (
          <ul class="chips">
            {states.map(([state, n]) => (
              <li key={state}>
                <StateBadge state={state} /> <span class="count">{formatCount(n)}</span>
              </li>
            ))}
          </ul>
        )}
      </section>

      <HealthCounts />

      <section aria-labelledby="activity-title">
        <h2 id="activity-title">Account activity</h2>
        {recent.length < fleet.accounts.length && (
          <p class="muted">
            The {formatCount(recent.length)} accounts with the latest events, of {formatCount(fleet.accounts.length)}: every account is a
            tile above and a row of the <a href={hrefFor('accounts')}>Accounts</a> page.
          </p>
        )}
        <TableScroll label="Account activity table">
          <table>
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col">State</th>
                <th scope="col">Agent</th>
                <th scope="col">Replica</th>
                <th scope="col" class="num">
                  Events
                </th>
                <th scope="col">Last event</th>
              </tr>
            </thead>
            <tbody>
              {fleet.accounts.length === 0 && (
                <tr>
                  <td colSpan={6} class="empty">
                    No accounts yet.
                  </td>
                </tr>
              )}
              {recent.map((a) => (
                <tr key={a.name}>
                  <th scope="row">
                    <a href={hrefFor(`accounts/${encodeURIComponent(a.name)}`)}>{a.name}</a>
                  </th>
                  <td>
                    <StateBadge state={a.state} />
                  </td>
                  <td class="mono">{a.agentId || '—'}</td>
                  <td class="mono">{a.gatewayId || '—'}</td>
                  <td class="num">{formatCount(a.eventsTotal)}</td>
                  <td>
                    <TimeText ts={a.lastEventTime} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </section>

      <RecentOperations fleet={fleet} />
    </>
  );
}
