import type { Fleet } from '../../src/gen/outpost/api/v1/fleet_service_pb.js';
import type { OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { AgoText } from './ago-text.js';
import { ErrorMessage } from './error-message.js';
import { operationsSignal } from './fleet-signals.js';
import { formatDuration, operationStateName } from './format.js';
import { operationHref } from './operation-href.js';
import { describeTargetIn } from './operation-summary.js';
import { hrefFor } from './router.js';
import { useServices } from './services.js';
import { StateBadge } from './state-badge.js';
import { TableScroll } from './table-scroll.js';
import { useLiveQuery } from './use-live-query.js';

/** Rows shown: as many as the fleet summary carries. */
const RECENT = 10;

/**
 * The overview's "Recent operations": per operation its short id (a link to its page, the full id as tooltip and
 * label), type, target (kind/name in account/namespace), state, how long ago it was received and its total time.
 * The fleet summary leaves the requests out, so the rows are read with ListOperations (the newest 10) whenever the
 * summary's recent operations change; until the first answer the summary's own rows show, without targets.
 */
export function RecentOperations({ fleet }: { fleet: Fleet }) {
  const { api } = useServices();
  const listed = useLiveQuery<OperationRecord[]>(
    'recent-operations',
    (signal) => api.operations.listOperations({ pageSize: RECENT }, { signal }).then((r) => r.operations),
    operationsSignal(fleet),
  );
  const rows = listed.data ?? fleet.recentOperations;
  return (
    <section aria-labelledby="recent-title">
      <h2 id="recent-title">Recent operations</h2>
      <ErrorMessage error={listed.error} context="Could not load the operations' targets" />
      <TableScroll label="Recent operations table">
        <table class="recent-ops">
          <thead>
            <tr>
              <th scope="col">ID</th>
              <th scope="col">Type</th>
              <th scope="col">Target</th>
              <th scope="col">State</th>
              <th scope="col">Received</th>
              <th scope="col" class="num">
                Total
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 && (
              <tr>
                <td colSpan={6} class="empty">
                  No operations yet.
                </td>
              </tr>
            )}
            {rows.map((op) => (
              <tr key={op.id} data-operation={op.id}>
                <th scope="row" class="mono" data-col="id">
                  <a href={operationHref(op.id)} title={op.id} aria-label={`Operation ${op.id}`}>
                    {op.id.slice(0, 8)}
                  </a>
                </th>
                <td data-col="type">{op.type}</td>
                <td class="wrap-cell" data-col="target">
                  {describeTargetIn(op)}
                </td>
                <td data-col="state">
                  <StateBadge state={operationStateName(op.state)} />
                </td>
                <td data-col="received">
                  <AgoText ts={op.receivedAt} />
                </td>
                <td class="num" data-col="total">
                  {formatDuration(op.totalDuration)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <p>
        <a href={hrefFor('operations')}>All operations</a>
      </p>
    </section>
  );
}
