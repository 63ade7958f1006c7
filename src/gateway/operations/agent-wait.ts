/**
 * Waiting for an agent: an operation no stream took is dispatched again every {@link FIRST_RETRY_MS} during the first
 * {@link FIRST_RETRIES_FOR_MS} of its wait (an agent whose replica died is back on another within a second: failover),
 * then every {@link DISPATCH_RETRY_MS} (an agent may connect to any replica; the replica that received it is its only
 * dispatcher while it is PENDING), and fails with
 * {@link noAgentError} once `operations.agentWaitSeconds` passed without a send — unless its deadline comes first,
 * which then says it was never sent (docs/architecture.md, rule 6).
 */
import type { OperationContext, LocalOperation } from './operation-context.js';
import type { OperationRow } from './operation-store.js';

/** Error of operations that found no agent within `agentWaitSeconds`. */
const noAgentError = (account: string) => `no agent connected for account ${account}`;
/** How often an operation no stream took is dispatched again while it waits for an agent… */
const DISPATCH_RETRY_MS = 500;
/** …and how often during the first seconds of its wait, when an agent that lost its replica is reconnecting. */
const FIRST_RETRY_MS = 100;
const FIRST_RETRIES_FOR_MS = 3000;

/**
 * (Re)arms the retry and agent-wait timers of `local` (operation `id`). Call it only when a dispatch found no stream
 * and nothing sent the operation yet; it replaces the timers of an earlier call.
 */
export type ArmAgentWait = (id: string, local: LocalOperation) => void;

/**
 * Creates the timer arming over the shared context. `redeliver` dispatches the row again (operation-delivery.ts); it
 * is called only from a timer, so it may be bound after this returns.
 */
export function createAgentWait(ctx: OperationContext, redeliver: (row: OperationRow) => Promise<unknown>): ArmAgentWait {
  const { store, config, log, locals, settle, report } = ctx;
  return (id, local) => {
    clearTimeout(local.waitTimer);
    clearTimeout(local.retryTimer);
    const waitedMs = ctx.agentWaitMs - (local.waitUntil - Date.now());
    const every = waitedMs < FIRST_RETRIES_FOR_MS ? FIRST_RETRY_MS : DISPATCH_RETRY_MS;
    const retryAt = Math.min(Date.now() + every, Math.min(local.waitUntil, local.deadlineAt));
    local.retryTimer = setTimeout(
      () => {
        local.retryTimer = undefined;
        if (local.sent || local.delivering > 0 || !locals.has(id) || Date.now() >= Math.min(local.waitUntil, local.deadlineAt)) return;
        redeliver(local.row).catch(report('could not dispatch the operation again', id));
      },
      Math.max(0, retryAt - Date.now()),
    );
    local.retryTimer.unref();
    if (local.waitUntil >= local.deadlineAt) return; // the deadline comes first and says it was never sent
    local.waitTimer = setTimeout(
      () => {
        local.waitTimer = undefined;
        if (local.sent || local.delivering > 0) return;
        const error = noAgentError(local.account);
        store.finish(id, { state: 'FAILED', error, at: new Date() }, { onlyStates: ['PENDING'] }).then(
          (row) => {
            if (!row) return;
            log.warn({ operationId: id, account: local.account, agentWaitSeconds: config.agentWaitSeconds }, error);
            settle(row);
          },
          report('could not fail the operation', id),
        );
      },
      Math.max(0, local.waitUntil - Date.now()),
    );
    local.waitTimer.unref();
  };
}
