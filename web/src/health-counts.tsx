import { ErrorMessage } from './error-message.js';
import { accountsSignal } from './fleet-signals.js';
import { formatCount } from './format.js';
import { sharedHealthSummary } from './health-summary-source.js';
import { hrefFor } from './router.js';
import { useServices } from './services.js';
import { TableScroll } from './table-scroll.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';

const COLUMNS: { key: 'healthy' | 'progressing' | 'degraded' | 'paused' | 'unknown'; title: string }[] = [
  { key: 'healthy', title: 'Healthy' },
  { key: 'progressing', title: 'Progressing' },
  { key: 'degraded', title: 'Degraded' },
  { key: 'paused', title: 'Paused' },
  { key: 'unknown', title: 'Unknown' },
];

/**
 * The overview's "Workload health" section: per account, how many cached workloads are in each health state
 * (ObjectService.SummarizeHealth), fetched again whenever any account receives events — the same call as the fleet
 * tiles' (health-summary-source.ts). Accounts without workloads are not listed.
 */
export function HealthCounts() {
  const services = useServices();
  const { fleet } = useFleet();
  const trigger = accountsSignal(fleet, null);
  const summary = useLiveQuery('health-summary', () => sharedHealthSummary(services, trigger), trigger);
  const rows = summary.data;
  return (
    <section aria-labelledby="health-title">
      <h2 id="health-title">Workload health</h2>
      <ErrorMessage error={summary.error} context="Could not load the workload health" />
      {!rows ? (
        summary.busy && <p class="loading">Loading the workload health…</p>
      ) : (
        <TableScroll label="Workload health table">
          <table aria-busy={summary.busy ? 'true' : 'false'}>
            <thead>
              <tr>
                <th scope="col">Account</th>
                {COLUMNS.map((c) => (
                  <th key={c.key} scope="col" class="num">
                    {c.title}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 && (
                <tr>
                  <td colSpan={COLUMNS.length + 1} class="empty">
                    No workloads cached.
                  </td>
                </tr>
              )}
              {rows.map((r) => (
                <tr key={r.account} data-account={r.account}>
                  <th scope="row">
                    <a href={hrefFor('objects', { account: r.account })}>{r.account}</a>
                  </th>
                  {COLUMNS.map((c) => (
                    <td key={c.key} class="num" data-col={c.key}>
                      {r[c.key] > 0 ? formatCount(r[c.key]) : <span class="muted">0</span>}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}
