import type { Account } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { ErrorMessage } from './error-message.js';
import { accountsSignal } from './fleet-signals.js';
import { PageTitle } from './page-title.js';
import { hrefFor } from './router.js';
import { useServices } from './services.js';
import { StateBadge } from './state-badge.js';
import { TableScroll } from './table-scroll.js';
import { TimeText } from './time-text.js';
import { TransportBadge } from './transport-badge.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';

/**
 * Why an account is refused or failing: the latest refused claim by another cluster, else the account's own
 * reason when its state is FAILED, ORPHANED, DELETE_FAILED or a refusal. Empty when all is well.
 */
function refusalText(account: Account): string {
  if (account.refusedClaim) {
    const who = account.refusedClaim.apiHost || account.refusedClaim.agentId;
    return who ? `${account.refusedClaim.reason} (claimed by ${who})` : account.refusedClaim.reason;
  }
  const failing = /FAIL|REFUS|ORPHAN/.test(account.state);
  return failing ? account.reason : '';
}

/** Sync progress as "kinds synced/kinds total" ("—" before the agent reported its kinds). */
export function syncText(account: Account): string {
  const p = account.syncProgress;
  return p && p.kindsTotal > 0 ? `${p.kindsSynced}/${p.kindsTotal}` : '—';
}

/**
 * Every account (AccountService.ListAccounts) with the transport of the stream caching it, re-fetched whenever the
 * fleet summary shows any account changing (state, owner, events) or accounts appearing or disappearing.
 */
export function AccountsView() {
  const { api } = useServices();
  const { fleet } = useFleet();
  const query = useLiveQuery(
    'accounts',
    (signal) => api.accounts.listAccounts({}, { signal }).then((r) => r.accounts),
    accountsSignal(fleet, null),
  );
  const accounts = query.data;

  return (
    <>
      <PageTitle title="Accounts" />
      <ErrorMessage error={query.error} context="Could not load the accounts" />
      {!accounts ? (
        query.busy && <p class="loading">Loading accounts…</p>
      ) : (
        <TableScroll label="Accounts table">
          <table>
            <caption>
              {accounts.length} {accounts.length === 1 ? 'account' : 'accounts'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Agent</th>
                <th scope="col">Transport</th>
                <th scope="col">Replica</th>
                <th scope="col">Kinds synced</th>
                <th scope="col">Last event</th>
                <th scope="col">Refusals</th>
              </tr>
            </thead>
            <tbody>
              {accounts.length === 0 && (
                <tr>
                  <td colSpan={8} class="empty">
                    No accounts. Start an agent or define one at the gateway.
                  </td>
                </tr>
              )}
              {accounts.map((a) => (
                <tr key={a.name} data-account={a.name}>
                  <th scope="row">
                    <a href={hrefFor(`accounts/${encodeURIComponent(a.name)}`)}>{a.name}</a>
                  </th>
                  <td>
                    <StateBadge state={a.state} />
                  </td>
                  <td class="mono">{a.agentId || '—'}</td>
                  <td>
                    <TransportBadge transport={a.transport} />
                  </td>
                  <td class="mono">{a.gatewayId || '—'}</td>
                  <td class="num">{syncText(a)}</td>
                  <td>
                    <TimeText ts={a.lastEventTime} />
                  </td>
                  <td class="wrap">{refusalText(a)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  );
}
