import type { Agent } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { ErrorMessage } from './error-message.js';
import { accountsSignal } from './fleet-signals.js';
import { formatCount, NONE } from './format.js';
import { PageTitle } from './page-title.js';
import { hrefFor } from './router.js';
import { useServices } from './services.js';
import { TableScroll } from './table-scroll.js';
import { TimeText } from './time-text.js';
import { TransportBadge } from './transport-badge.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';

/**
 * Every live agent stream of every replica (AccountService.ListAgents): the agent, the transport its stream came
 * over, its replica, zone and version, the accounts it caches and how many it stands by for or was refused, and when
 * it connected and was last heard from. Re-fetched whenever the fleet summary shows agents connecting or leaving
 * (per replica) or any account changing owner or state.
 */
export function AgentsView() {
  const { api } = useServices();
  const { fleet } = useFleet();
  const trigger = fleet ? `${fleet.replicas.map((r) => `${r.id}:${r.connectedAgents}`).join(',')}|${accountsSignal(fleet, null)}` : null;
  const query = useLiveQuery('agents', (signal) => api.accounts.listAgents({}, { signal }).then((r) => r.agents), trigger);
  const agents = query.data;

  return (
    <>
      <PageTitle title="Agents" />
      <ErrorMessage error={query.error} context="Could not load the agents" />
      {!agents ? (
        query.busy && <p class="loading">Loading agents…</p>
      ) : (
        <TableScroll label="Agents table">
          <table>
            <caption>
              {agents.length} {agents.length === 1 ? 'agent stream' : 'agent streams'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Transport</th>
                <th scope="col">Replica</th>
                <th scope="col">Zone</th>
                <th scope="col">Version</th>
                <th scope="col">Caching</th>
                <th scope="col" class="num">
                  Standby
                </th>
                <th scope="col" class="num">
                  Refused
                </th>
                <th scope="col">Connected</th>
                <th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {agents.length === 0 && (
                <tr>
                  <td colSpan={10} class="empty">
                    No agent is connected.
                  </td>
                </tr>
              )}
              {agents.map((a) => (
                <AgentRow key={a.sessionId} agent={a} />
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  );
}

function AgentRow({ agent: a }: { agent: Agent }) {
  return (
    <tr data-agent={a.agentId} data-session={a.sessionId}>
      <th scope="row" class="mono">
        {a.agentId}
      </th>
      <td>
        <TransportBadge transport={a.transport} />
      </td>
      <td class="mono">{a.gatewayId || NONE}</td>
      <td>{a.zone || NONE}</td>
      <td>{a.version || NONE}</td>
      <td class="wrap">
        {a.caching.length === 0
          ? NONE
          : a.caching.map((name, i) => (
              <span key={name}>
                {i > 0 && ', '}
                <a href={hrefFor(`accounts/${encodeURIComponent(name)}`)}>{name}</a>
              </span>
            ))}
      </td>
      <td class="num">{formatCount(a.standby.length)}</td>
      <td class="num">{formatCount(a.refused.length)}</td>
      <td>
        <TimeText ts={a.connectedTime} />
      </td>
      <td>
        <TimeText ts={a.lastSeenTime} />
      </td>
    </tr>
  );
}
