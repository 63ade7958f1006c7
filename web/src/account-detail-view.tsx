import type { ComponentChildren } from 'preact';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Account, Agent, AccountTransition } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { syncText } from './accounts-view.js';
import { ErrorMessage } from './error-message.js';
import { Fact } from './fact.js';
import { HistoryCharts } from './history-charts.js';
import { accountsSignal } from './fleet-signals.js';
import { formatCount, NONE } from './format.js';
import { PageTitle } from './page-title.js';
import { hrefFor } from './router.js';
import { useServices } from './services.js';
import { StateBadge } from './state-badge.js';
import { TableScroll } from './table-scroll.js';
import { TimeText } from './time-text.js';
import { TransportBadge } from './transport-badge.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';

/** What the Kinds table's two counts count (the columns' tooltips and the note under the table). */
const KIND_COLUMNS = {
  cached: 'objects of this kind the gateway holds now, kept current by the watch.',
  listed:
    "objects the agent's last full list of this kind returned (while the first list runs: how many so far); it differs from the cache when objects came or went since.",
};

interface Detail {
  account: Account;
  transitions: AccountTransition[];
  standby: Agent[];
}

/**
 * One account (`#/accounts/<name>`): cluster identity and the transport of the stream caching it, per-kind cache
 * state, skipped kinds, the refused claim, standby agents and recent transitions. GetAccount and ListAgents run together and again whenever the fleet
 * summary shows this account changing or the number of connected agents changing.
 */
export function AccountDetailView({ name }: { name: string }) {
  const { api } = useServices();
  const { fleet } = useFleet();
  const trigger = fleet ? `${accountsSignal(fleet, [name])}|${fleet.connectedAgents}` : null;
  const query = useLiveQuery<Detail>(
    `account:${name}`,
    async (signal) => {
      const [got, agents] = await Promise.all([api.accounts.getAccount({ name }, { signal }), api.accounts.listAgents({}, { signal })]);
      if (!got.account) throw new ConnectError(`account ${name} not returned`, Code.Internal);
      return {
        account: got.account,
        transitions: got.transitions,
        standby: agents.agents.filter((a) => a.standby.includes(name)),
      };
    },
    trigger,
  );
  const detail = query.data;
  const notFound = query.error instanceof ConnectError && query.error.code === Code.NotFound;

  return (
    <>
      <p class="breadcrumb">
        <a href={hrefFor('accounts')}>Accounts</a> <span aria-hidden="true">/</span>
      </p>
      <PageTitle title={`Account ${name}`} />
      {notFound ? (
        <p class="error" role="alert">
          There is no account named “{name}”.
        </p>
      ) : (
        <ErrorMessage error={query.error} context="Could not load the account" />
      )}
      {!detail ? query.busy && <p class="loading">Loading the account…</p> : <AccountDetailBody detail={detail} />}
    </>
  );
}

/** A fact of the account (fact.tsx), "—" when empty. */
function Row({ label, children }: { label: string; children: ComponentChildren }) {
  return <Fact label={label}>{children || <span class="muted">{NONE}</span>}</Fact>;
}

function AccountDetailBody({ detail }: { detail: Detail }) {
  const { account: a, transitions, standby } = detail;
  const objectsHref = (kind: string): string => hrefFor('objects', { account: a.name, kind });
  return (
    <>
      <section aria-labelledby="cluster-title">
        <h2 id="cluster-title">Cluster</h2>
        <dl class="facts">
          <Row label="State">
            <StateBadge state={a.state} />
          </Row>
          {a.reason && <Row label="Reason">{a.reason}</Row>}
          <Row label="API host">{a.apiHost && <span class="mono">{a.apiHost}</span>}</Row>
          <Row label="CA fingerprint">{a.caFingerprint && <span class="mono wrap">{a.caFingerprint}</span>}</Row>
          <Row label="Kubernetes version">{a.kubernetesVersion}</Row>
          <Row label="Namespaces">{a.namespaces.length > 0 ? a.namespaces.join(', ') : 'all'}</Row>
          <Row label="Zone">{a.zoneId}</Row>
          <Row label="Source">{a.source}</Row>
          <Row label="Agent">{a.agentId && <span class="mono">{a.agentId}</span>}</Row>
          <Row label="Transport">
            <TransportBadge transport={a.transport} />
          </Row>
          <Row label="Replica">{a.gatewayId && <span class="mono">{a.gatewayId}</span>}</Row>
          <Row label="Kinds synced">{syncText(a)}</Row>
          <Row label="Last connection">
            <TimeText ts={a.lastConnectionTime} />
          </Row>
          <Row label="Last event">
            <TimeText ts={a.lastEventTime} />
          </Row>
        </dl>
        <p>
          <a href={hrefFor('objects', { account: a.name })}>Browse the objects of {a.name}</a>
        </p>
      </section>

      <HistoryCharts account={a.name} />

      <section aria-labelledby="kinds-title">
        <h2 id="kinds-title">Kinds</h2>
        <TableScroll label="Kinds table">
          <table aria-describedby="kinds-note">
            <thead>
              <tr>
                <th scope="col">API version</th>
                <th scope="col">Kind</th>
                <th scope="col" class="num" title={KIND_COLUMNS.cached}>
                  In cache
                </th>
                <th scope="col">Synced</th>
                <th scope="col" class="num" title={KIND_COLUMNS.listed}>
                  Last list
                </th>
              </tr>
            </thead>
            <tbody>
              {a.kinds.length === 0 && (
                <tr>
                  <td colSpan={5} class="empty">
                    No kinds reported yet.
                  </td>
                </tr>
              )}
              {a.kinds.map((k) => (
                <tr key={`${k.apiVersion}/${k.kind}`}>
                  <td class="mono">{k.apiVersion}</td>
                  <th scope="row">
                    <a href={objectsHref(k.kind)}>{k.kind}</a>
                  </th>
                  <td class="num">{formatCount(k.count)}</td>
                  <td>{k.synced ? 'Yes' : 'No'}</td>
                  <td class="num">{formatCount(k.listed)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
        <p id="kinds-note" class="hint">
          <strong>In cache</strong>: {KIND_COLUMNS.cached} <strong>Last list</strong>: {KIND_COLUMNS.listed}
        </p>
      </section>

      <section aria-labelledby="skipped-title">
        <h2 id="skipped-title">Skipped kinds</h2>
        {a.skippedKinds.length === 0 ? (
          <p class="empty">None: the agent watches every kind it was asked to.</p>
        ) : (
          <TableScroll label="Skipped kinds table">
            <table>
              <thead>
                <tr>
                  <th scope="col">API version</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {a.skippedKinds.map((k) => (
                  <tr key={`${k.apiVersion}/${k.kind}`}>
                    <td class="mono">{k.apiVersion}</td>
                    <th scope="row">{k.kind}</th>
                    <td class="wrap">{k.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </section>

      <section aria-labelledby="refused-title">
        <h2 id="refused-title">Refused claim</h2>
        {!a.refusedClaim ? (
          <p class="empty">No other cluster has claimed this name.</p>
        ) : (
          <dl class="facts">
            <Row label="Reason">{a.refusedClaim.reason}</Row>
            <Row label="Agent">{a.refusedClaim.agentId && <span class="mono">{a.refusedClaim.agentId}</span>}</Row>
            <Row label="API host">{a.refusedClaim.apiHost && <span class="mono">{a.refusedClaim.apiHost}</span>}</Row>
            <Row label="CA fingerprint">
              {a.refusedClaim.caFingerprint && <span class="mono wrap">{a.refusedClaim.caFingerprint}</span>}
            </Row>
            <Row label="Time">
              <TimeText ts={a.refusedClaim.time} />
            </Row>
          </dl>
        )}
      </section>

      <section aria-labelledby="standby-title">
        <h2 id="standby-title">Standby agents</h2>
        {standby.length === 0 ? (
          <p class="empty">No agent is standing by for this account.</p>
        ) : (
          <TableScroll label="Standby agents table">
            <table>
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Transport</th>
                  <th scope="col">Replica</th>
                  <th scope="col">Zone</th>
                  <th scope="col">Version</th>
                  <th scope="col">Connected</th>
                </tr>
              </thead>
              <tbody>
                {standby.map((s) => (
                  <tr key={s.sessionId || s.agentId}>
                    <th scope="row" class="mono">
                      {s.agentId}
                    </th>
                    <td>
                      <TransportBadge transport={s.transport} />
                    </td>
                    <td class="mono">{s.gatewayId}</td>
                    <td>{s.zone || NONE}</td>
                    <td>{s.version || NONE}</td>
                    <td>
                      <TimeText ts={s.connectedTime} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </section>

      <section aria-labelledby="transitions-title">
        <h2 id="transitions-title">Recent transitions</h2>
        {transitions.length === 0 ? (
          <p class="empty">No transitions recorded.</p>
        ) : (
          <TableScroll label="Transitions table">
            <table>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">From</th>
                  <th scope="col">To</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Actor</th>
                </tr>
              </thead>
              <tbody>
                {transitions.map((t, i) => (
                  <tr key={i}>
                    <th scope="row">
                      <TimeText ts={t.time} />
                    </th>
                    <td>
                      <StateBadge state={t.fromState} />
                    </td>
                    <td>
                      <StateBadge state={t.toState} />
                    </td>
                    <td class="wrap">{t.reason || NONE}</td>
                    <td class="mono">{t.actor || NONE}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </section>
    </>
  );
}
