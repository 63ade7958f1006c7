import type { OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { formatCount, formatDuration, operationStateName } from './format.js';
import { operationHref } from './operation-href.js';
import { operationPhases } from './operation-phases.js';
import { describeTarget, summarizeOperation } from './operation-summary.js';
import { StateBadge } from './state-badge.js';
import { TableScroll } from './table-scroll.js';
import { TimelineCell } from './timeline-bar.js';
import { TimeText } from './time-text.js';

/** Props of OperationsTable. */
export interface OperationsTableProps {
  items: OperationRecord[];
  busy: boolean;
  /** The number of the page shown, from 1. */
  page: number;
  hasMore: boolean;
}

/**
 * The operations history as a table that fits its box: the key columns (operation, target, state, received,
 * total, result) share the width, the timeline (a small bar of the phases and their times, timeline-bar.tsx) sits
 * under the total instead of taking columns of its own, the
 * id is shortened (a link to the operation's page; the full id is its tooltip, its label and the row's
 * `data-operation`), and the result wraps. On phones
 * (styles: `.stack-table`) every row becomes a card of labelled lines, so nothing scrolls sideways.
 * Cells carry `data-col` for tests and `data-label` for the stacked layout.
 */
export function OperationsTable({ items, busy, page, hasMore }: OperationsTableProps) {
  const now = Date.now();
  return (
    <TableScroll label="Operations table">
      <table class="ops-table stack-table" aria-busy={busy ? 'true' : 'false'}>
        <caption>
          Page {page}: {formatCount(items.length)} {items.length === 1 ? 'operation' : 'operations'}, newest first
          {hasMore ? ' (more on the next page)' : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">ID</th>
            <th scope="col">Account</th>
            <th scope="col">Type</th>
            <th scope="col">Target</th>
            <th scope="col">State</th>
            <th scope="col">Received</th>
            <th
              scope="col"
              class="num"
              title="received_at → terminal; below: a bar of store, dispatch, agent, Kubernetes and result, then their times"
            >
              Total
            </th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {items.length === 0 && (
            <tr>
              <td colSpan={8} class="empty">
                No operations match.
              </td>
            </tr>
          )}
          {items.map((op) => (
            <tr key={op.id} data-operation={op.id}>
              <th scope="row" class="mono" data-label="ID" data-col="id">
                <a href={operationHref(op.id)} title={op.id} aria-label={`Operation ${op.id}`}>
                  {op.id.slice(0, 8)}
                </a>
              </th>
              <td data-label="Account" data-col="account">
                {op.account}
              </td>
              <td data-label="Type" data-col="type">
                {op.type}
              </td>
              <td class="target" data-label="Target" data-col="target">
                {describeTarget(op)}
              </td>
              <td data-label="State" data-col="state">
                <StateBadge state={operationStateName(op.state)} />
              </td>
              <td data-label="Received" data-col="received">
                <TimeText ts={op.receivedAt} />
              </td>
              <td class="num total" data-label="Total" data-col="total">
                {formatDuration(op.totalDuration)}
                <TimelineCell timeline={operationPhases(op, now)} />
              </td>
              <td class="result" data-label="Result" data-col="result">
                {summarizeOperation(op)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
