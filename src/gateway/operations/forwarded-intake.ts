/**
 * Operations another replica forwarded here (the internal forwarding route, docs/replicas.md): run only when the
 * origin stored them and they are still open, exactly as stored — a replica credential alone cannot make a replica
 * run anything (docs/architecture.md, rule 9) — and sent to a local stream only, never forwarded again, so forwards
 * cannot loop. When the origin asks for it, the forward's answer carries the operation's terminal row too, once this
 * replica committed it (one hop: {@link ForwardAccepted.outcome}); otherwise, or when that answer cannot be given, the
 * result goes back to the origin through the result relay. The origin side of that answer is {@link settleForwardAnswer}.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { DispatchTarget } from '../replicas/dispatch.js';
import type { OperationContext } from './operation-context.js';
import { isTerminal } from './operation-state.js';
import type { OperationRow } from './operation-store.js';
import { durationToMs } from '../../shared/durations.js';

/** The terminal row a forward's answer waits for. */
interface ForwardOutcome {
  /**
   * The operation's terminal row once committed here (by its result, or its deadline); undefined when none came within
   * the operation's time, or {@link cancel} was called, or the manager closed. Never rejects.
   */
  row: Promise<OperationRow | undefined>;
  /** The caller stopped waiting (its call broke): a result arriving later is relayed as usual. */
  cancel(): void;
}

/** A forwarded operation a local stream took. */
interface ForwardAccepted extends DispatchTarget {
  /** Present when the origin asked for the row in the answer. */
  outcome?: ForwardOutcome;
}

/** See OperationManager.acceptForwarded in operation-manager.ts. */
export type AcceptForwarded = (origin: string, operation: Operation, answerWithRow?: boolean) => Promise<ForwardAccepted | undefined>;

/** How much longer than the operation's remaining time an answer waits for its row (a result recorded just in time). */
const ROW_WAIT_GRACE_MS = 1000;

/** Creates the intake over the shared context; it takes nothing when the manager has no `dispatchLocal`. */
export function createForwardedIntake(ctx: OperationContext): AcceptForwarded {
  const { store, sealer, log, limits, deps, notifier, closing } = ctx;
  return async (origin, operation, answerWithRow = false) => {
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
    if (!target) return undefined;
    const remainingMs = operation.timeout ? durationToMs(operation.timeout) : limits.defaultTimeoutMs;
    deps.relay?.remember(operation.id, origin, Date.now() + remainingMs + 5000, target.sessionId, row);
    log.debug({ operationId: operation.id, account: operation.account, origin, ...target }, 'forwarded operation sent');
    if (!answerWithRow || !deps.relay) return target;
    // Same turn as the send: the agent's result cannot have come yet. From here its result is recorded here (the
    // relay declines it) and published to this subscription once committed.
    const release = deps.relay.answerInForward(operation.id);
    let finish!: (row: OperationRow | undefined) => void;
    const outcome = new Promise<OperationRow | undefined>((resolve) => {
      const unsubscribe = notifier.subscribe(operation.id, (r) => {
        if (isTerminal(r.state)) finish(r);
      });
      const timer = setTimeout(() => finish(undefined), remainingMs + ROW_WAIT_GRACE_MS);
      timer.unref();
      const onClose = () => finish(undefined);
      closing.addEventListener('abort', onClose, { once: true });
      finish = (r) => {
        release();
        unsubscribe();
        clearTimeout(timer);
        closing.removeEventListener('abort', onClose);
        resolve(r);
      };
    });
    return { ...target, outcome: { row: outcome, cancel: () => finish(undefined) } };
  };
}

/** What a forward's second answer part carries: what the terminal update changed (the origin holds the rest). */
const ANSWER_FIELDS = ['state', 'result', 'error', 'agentId', 'sessionId', 'sentAt', 'resultAt', 'finishedAt'] as const;
const ANSWER_DATES = new Set<string>(['sentAt', 'resultAt', 'finishedAt']);

/** The JSON of a forward's second answer part for terminal row `row`: `{id, row: {state, result, …}}`. */
export function answerPart(row: OperationRow): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const key of ANSWER_FIELDS) changed[key] = row[key];
  return { id: row.id, row: changed };
}

/**
 * `base` (the row as the origin stored it) with what a forward's second answer part says changed; undefined unless the
 * part is operation `base.id`'s and terminal.
 */
function rowFromAnswer(json: unknown, base: OperationRow): OperationRow | undefined {
  const part = json as { id?: unknown; row?: Record<string, unknown> } | undefined;
  const changed = part?.row;
  if (part?.id !== base.id || typeof changed !== 'object' || changed === null) return undefined;
  if (typeof changed.state !== 'string' || !isTerminal(changed.state)) return undefined;
  const row: Record<string, unknown> = { ...base };
  for (const key of ANSWER_FIELDS) {
    const value = changed[key];
    if (ANSWER_DATES.has(key)) row[key] = typeof value === 'string' ? new Date(value) : null;
    else if (value !== undefined) row[key] = value;
  }
  return row as OperationRow;
}

/**
 * The origin side of a one-hop forward: `json` is the forward's second answer part (dispatch.ts), what the holding
 * replica committed. Settles the operation here with it — its waiters wake at once, without reading the row again —
 * unless something settled it first. It is counted where it was recorded, not again here. Anything else is ignored:
 * the waiters still see the row on their next read.
 */
export function settleForwardAnswer(ctx: OperationContext, id: string, json: unknown): void {
  const local = ctx.locals.get(id);
  if (!local || local.final) return;
  const row = rowFromAnswer(json, local.row);
  if (row) ctx.settleRecordedElsewhere(row);
}
