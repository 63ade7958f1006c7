/**
 * Operations another replica forwarded here (the internal forwarding route, docs/replicas.md): run only when the
 * origin stored them and they are still open, exactly as stored — a replica credential alone cannot make a replica
 * run anything (docs/architecture.md, rule 9) — and sent to a local stream only, never forwarded again, so forwards
 * cannot loop. The result goes back to the origin through the result relay.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { DispatchTarget } from '../replicas/dispatch.js';
import type { OperationContext } from './operation-context.js';
import { isTerminal } from './operation-state.js';
import { durationToMs } from './operation-validation.js';

/** See OperationManager.acceptForwarded in operation-manager.ts. */
export type AcceptForwarded = (origin: string, operation: Operation) => Promise<DispatchTarget | undefined>;

/** Creates the intake over the shared context; it takes nothing when the manager has no `dispatchLocal`. */
export function createForwardedIntake(ctx: OperationContext): AcceptForwarded {
  const { store, sealer, log, limits, deps } = ctx;
  return async (origin, operation) => {
    if (!deps.dispatchLocal) return undefined;
    const row = await store.get(operation.id);
    if (!row) throw new ConnectError(`no stored operation has the id ${JSON.stringify(operation.id)}: nothing to run`, Code.NotFound);
    const mismatch =
      row.gatewayId !== origin
        ? `operation ${row.id} was not received by replica ${JSON.stringify(origin)}`
        : await sealer.mismatch(operation, row);
    if (mismatch) {
      log.warn({ operationId: row.id, origin }, `forwarded operation refused: ${mismatch}`);
      throw new ConnectError(`${mismatch}: refused`, Code.PermissionDenied);
    }
    if (isTerminal(row.state))
      throw new ConnectError(`operation ${row.id} already ended (${row.state}): not sent again`, Code.FailedPrecondition);
    const target = deps.dispatchLocal(operation.account, operation);
    if (target) {
      const until = Date.now() + (operation.timeout ? durationToMs(operation.timeout) : limits.defaultTimeoutMs) + 5000;
      deps.relay?.remember(operation.id, origin, until, target.sessionId);
      log.debug({ operationId: operation.id, account: operation.account, origin, ...target }, 'forwarded operation sent');
    }
    return target;
  };
}
