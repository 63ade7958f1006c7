/**
 * The gateway side of operations: submit (validate → store PENDING → dispatch → SENT), results recorded once,
 * redelivery to newly started agent sessions, the agent-wait timer, per-operation deadline timers plus a sweeper for
 * every row (also those of a replica that died), and start-up recovery. The API and REST layers call only this.
 *
 * This file composes the parts, each one concept over the shared state of operation-context.ts: operation-submit.ts,
 * operation-delivery.ts, agent-wait.ts, session-redelivery.ts, operation-deadlines.ts, operation-reads.ts,
 * forwarded-intake.ts and result-intake.ts. Their rules: docs/architecture.md, rule 6.
 */
import type { OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { SubmitOperationRequest } from '../../gen/outpost/api/v1/operation_service_pb.js';
import type { OperationHooks } from '../agents/operation-hooks.js';
import { createAgentWait } from './agent-wait.js';
import { createForwardedIntake, type AcceptForwarded } from './forwarded-intake.js';
import { createOperationContext, type OperationManagerDeps } from './operation-context.js';
import { createOperationDeadlines } from './operation-deadlines.js';
import { createOperationDelivery, type Deliver } from './operation-delivery.js';
import { createOperationReads, type OperationReads } from './operation-reads.js';
import type { OperationRow } from './operation-store.js';
import { createOperationSubmit } from './operation-submit.js';
import { createResultIntake } from './result-intake.js';
import { createSessionRedelivery } from './session-redelivery.js';

export type { OperationManagerDeps } from './operation-context.js';
export { MAX_OPERATION_PAGE_SIZE } from './operation-reads.js';

/** The operations feature of one gateway replica. */
export interface OperationManager extends OperationHooks, Omit<OperationReads, 'waitTerminal'> {
  /**
   * Validates, stores, dispatches; with `req.wait`, returns once terminal (or at the deadline). `requestedBy` is
   * recorded on the row: who submitted it (an identity, plus the Spinnaker user for Spinnaker tasks).
   */
  submit(req: SubmitOperationRequest, signal?: AbortSignal, requestedBy?: string): Promise<OperationRow>;
  /** Start-up: this replica's open operations past their deadline → TIMED_OUT (restart). Returns how many. */
  recover(): Promise<number>;
  /** Starts the sweeper. */
  start(): void;
  /** Stops timers and ends waiters; call before the database closes. Idempotent. */
  close(): void;
  /**
   * An operation another replica (`origin`) forwarded: sent to a local stream only; its result goes back to `origin`.
   * It must be an operation `origin` stored and that is still open, as stored (id, account, spec): NOT_FOUND when no
   * row has its id, PERMISSION_DENIED when the row differs or was received by another replica, FAILED_PRECONDITION when
   * it already ended — nothing is sent then. A replica credential alone cannot make a replica run anything.
   * Undefined when no local stream could take it. With `answerWithRow`, the answer also waits for the operation's
   * terminal row (forwarded-intake.ts: one hop).
   */
  acceptForwarded: AcceptForwarded;
  /**
   * A result relayed by the replica holding the stream: UNAUTHENTICATED for a wrong session token, PERMISSION_DENIED
   * when that session does not serve the operation's account; recorded once otherwise.
   */
  relayedResult(result: OperationResult, sessionId: string, sessionToken: string): Promise<void>;
}

/** Creates the manager; call {@link OperationManager.recover} then {@link OperationManager.start} before serving. */
export function createOperationManager(deps: OperationManagerDeps): OperationManager {
  const ctx = createOperationContext(deps);
  const deadlines = createOperationDeadlines(ctx);
  const reads = createOperationReads(ctx);
  // The agent wait dispatches again through the delivery, which arms the agent wait: bound once both exist.
  const redeliver: Deliver = (row) => deliver(row);
  const deliver: Deliver = createOperationDelivery(ctx, createAgentWait(ctx, redeliver));
  const submit = createOperationSubmit(ctx, { track: deadlines.track, deliver, waitTerminal: reads.waitTerminal });
  const sessions = createSessionRedelivery(ctx, deliver);
  const results = createResultIntake(ctx);

  return {
    submit,
    get: reads.get,
    watch: reads.watch,
    list: reads.list,
    page: reads.page,
    recover: deadlines.recover,
    start: deadlines.start,
    close() {
      if (ctx.closing.aborted) return;
      ctx.shutdown();
      deadlines.stop();
    },
    sessionStarted: sessions.sessionStarted,
    sessionResumed: sessions.sessionResumed,
    resultReceived: results.resultReceived,
    acceptForwarded: createForwardedIntake(ctx),
    relayedResult: results.relayedResult,
  };
}
