import { Code, ConnectError } from '@connectrpc/connect';
import type { OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { ErrorMessage } from './error-message.js';
import { Fact } from './fact.js';
import { operationsSignal } from './fleet-signals.js';
import { formatBetween, formatDuration, NONE, operationStateName } from './format.js';
import { describeTarget, summarizeOperation } from './operation-summary.js';
import { OperationTimeline } from './operation-timeline.js';
import { PageTitle } from './page-title.js';
import { hrefFor } from './router.js';
import { useServices } from './services.js';
import { StateBadge } from './state-badge.js';
import { TimeText } from './time-text.js';
import { useFleet } from './use-fleet.js';
import { useLiveQuery } from './use-live-query.js';

/**
 * One operation on its own page (`#/operations/{id}`, see operation-href.ts): what was asked, of which account, by
 * whom, its state, its timeline (a bar of its phases, operation-timeline.tsx), every timestamp with the steps between
 * them, and the result or the gateway's error in full. It
 * is read with GetOperation and again whenever the fleet summary's operations change, so a running operation is
 * followed to its end. An unknown id says so.
 */
export function OperationPageView({ id }: { id: string }) {
  const { api } = useServices();
  const { fleet } = useFleet();
  const query = useLiveQuery<OperationRecord>(
    id,
    async (signal) => {
      const got = await api.operations.getOperation({ id }, { signal });
      if (!got.operation) throw new ConnectError(`operation ${id} not returned`, Code.Internal);
      return got.operation;
    },
    operationsSignal(fleet),
  );
  const missing = query.error instanceof ConnectError && query.error.code === Code.NotFound;
  const op = missing ? undefined : query.data;

  return (
    <>
      <PageTitle title={`Operation ${id}`} />
      <p>
        <a href={hrefFor('operations', op ? { account: op.account } : {})}>All operations{op ? ` of ${op.account}` : ''}</a>
      </p>
      {missing ? (
        <p class="empty">There is no operation with this id.</p>
      ) : (
        <ErrorMessage error={query.error} context="Could not load the operation" />
      )}
      {!op ? (
        query.busy && <p class="loading">Loading the operation…</p>
      ) : (
        <>
          <section class="panel" aria-label="Operation">
            <dl class="facts">
              <Fact label="State">
                <StateBadge state={operationStateName(op.state)} />
              </Fact>
              <Fact label="Type">{op.type}</Fact>
              <Fact label="Target">{describeTarget(op) || NONE}</Fact>
              <Fact label="Account">
                <a href={hrefFor(`accounts/${encodeURIComponent(op.account)}`)}>{op.account}</a>
              </Fact>
              <Fact label="Requested by">{op.requestedBy || NONE}</Fact>
              <Fact label="Gateway replica / agent">
                <span class="mono">
                  {op.gatewayId || NONE} / {op.agentId || NONE}
                </span>
              </Fact>
            </dl>
          </section>
          <section class="panel" aria-label="Timing">
            <OperationTimeline op={op} />
            <dl class="facts">
              <Fact label="Received">
                <TimeText ts={op.receivedAt} />
              </Fact>
              <Fact label={`Stored (after ${formatBetween(op.receivedAt, op.storedAt)})`}>
                <TimeText ts={op.storedAt} />
              </Fact>
              <Fact label={`Sent to the agent (after ${formatBetween(op.storedAt, op.sentAt)})`}>
                <TimeText ts={op.sentAt} />
              </Fact>
              <Fact label={`Result (after ${formatBetween(op.sentAt, op.resultAt)})`}>
                <TimeText ts={op.resultAt} />
              </Fact>
              <Fact label="Total">{formatDuration(op.totalDuration)}</Fact>
            </dl>
          </section>
          <section class="panel" aria-label="Result">
            <p class="result-text">{summarizeOperation(op) || <span class="muted">No result yet.</span>}</p>
          </section>
        </>
      )}
    </>
  );
}
