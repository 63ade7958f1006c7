/**
 * Sending an open operation to an agent: its sealed request opened, its remaining time set, handed to `dispatch`
 * (this replica's streams or another replica's) or to one session (a redelivery), and marked SENT. The SENT marks of
 * operations sent close together share one statement (write-batcher.ts); memory knows the first send before the mark
 * is written, which the result intake relies on (docs/architecture.md, rule 6).
 */
import { wellFormed } from '../../shared/unstorable-text.js';
import { ConnectError } from '@connectrpc/connect';
import type { Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import { isTransactionConflict } from '../../db/transient-error.js';
import type { LiveSession } from '../agents/session-registry.js';
import type { DispatchTarget } from '../replicas/dispatch.js';
import type { ArmAgentWait } from './agent-wait.js';
import { settleForwardAnswer } from './forwarded-intake.js';
import type { LocalOperation, OperationContext } from './operation-context.js';
import type { OperationRow, SentTarget } from './operation-store.js';
import { msToDuration } from '../../shared/durations.js';
import { createWriteBatcher } from './write-batcher.js';

/**
 * Dispatches an open row with its remaining time (to `via` only, when given: a redelivery to the session it was sent
 * on); returns the SENT row, or undefined when no agent took it (the agent wait is armed then, for a tracked row). The
 * SENT update is batched; with `durable` (the default) the call waits for it (and returns the row as stored when the
 * operation ended meanwhile), otherwise it is written in the background — the result's update carries sent_at anyway.
 * `operation`, when given, is the request as submitted (no need to open the stored one).
 */
export type Deliver = (row: OperationRow, operation?: Operation, durable?: boolean, via?: LiveSession) => Promise<OperationRow | undefined>;

/** Creates the delivery over the shared context; `armAgentWait` is called when no stream took a tracked operation. */
export function createOperationDelivery(ctx: OperationContext, armAgentWait: ArmAgentWait): Deliver {
  const { store, sealer, log, locals, notifier, settle, report, deps } = ctx;

  // Conditional updates, safe to run again after a deadlock or serialization failure.
  const sentWrites = createWriteBatcher(
    async (items: { id: string; target: SentTarget; local?: LocalOperation }[]) => {
      // Already settled (its result or deadline came first): the terminal update carried sent_at, nothing to write.
      const due = items.filter((i) => !i.local?.final);
      const changed = await store.markSentMany(due.map((i) => ({ id: i.id, ...i.target })));
      const byItem = new Map(due.map((item, n) => [item, changed[n]!]));
      return items.map((i) => byItem.get(i) ?? false);
    },
    { retryOn: isTransactionConflict },
  );

  return async (row, operation, durable = true, via) => {
    const remaining = row.deadlineAt.getTime() - Date.now();
    if (remaining <= 0) return undefined;
    const local = locals.get(row.id);
    if (local) {
      clearTimeout(local.waitTimer);
      local.delivering++;
    }
    try {
      let op: Operation;
      try {
        op = operation ?? (await sealer.open(row));
      } catch (err) {
        // Its Secret values cannot be opened here (the key is gone, or the row was altered): it can never be sent.
        // Made well-formed: the text is stored (a lone surrogate would fail the write).
        const error = wellFormed(`operation cannot be sent: ${err instanceof ConnectError ? err.rawMessage : (err as Error).message}`);
        const failed = await store.finish(row.id, { state: 'FAILED', error, at: new Date() });
        if (failed) settle(failed);
        log.error({ operationId: row.id, account: row.account }, error);
        return undefined;
      }
      const sendable: Operation = { ...op, timeout: msToDuration(remaining) };
      let dispatched!: () => void;
      if (local) local.dispatching = new Promise<void>((resolve) => (dispatched = resolve));
      let target: DispatchTarget | undefined;
      try {
        // A redelivery goes to the very session it is for; anything else to whichever stream dispatch picks.
        if (via) target = via.sendOperation(sendable) ? { agentId: via.agentId, sessionId: via.id } : undefined;
        else target = await deps.dispatch(row.account, sendable);
        if (target && local) local.sent ??= { agentId: target.agentId, sessionId: target.sessionId, sentAt: new Date() };
      } finally {
        dispatched?.();
      }
      if (!target) {
        if (local && !local.sent && locals.has(row.id)) armAgentWait(row.id, local);
        return undefined;
      }
      if (target.gatewayId === undefined) deps.relay?.remember(row.id, row.gatewayId, row.deadlineAt.getTime(), target.sessionId);
      // A one-hop forward: the holding replica's answer carries the committed row (forwarded-intake.ts).
      target.answer?.then((json) => settleForwardAnswer(ctx, row.id, json)).catch(report('could not settle a forwarded operation', row.id));
      const sentTarget: SentTarget = local?.sent ?? { agentId: target.agentId, sessionId: target.sessionId, sentAt: new Date() };
      log.debug({ operationId: row.id, account: row.account, ...target }, 'operation sent');
      const sent: OperationRow = {
        ...row,
        state: 'SENT',
        sentAt: row.sentAt ?? sentTarget.sentAt,
        agentId: target.agentId,
        sessionId: target.sessionId,
      };
      const written = sentWrites.add({ id: row.id, target: sentTarget, local }).then((changed) => {
        if (changed) notifier.publish(sent);
        return changed;
      });
      if (!durable) {
        written.catch(report('could not mark the operation sent', row.id));
        return sent;
      }
      if (await written) return sent;
      return local?.final ?? (await store.get(row.id));
    } finally {
      if (local) local.delivering--;
    }
  };
}
