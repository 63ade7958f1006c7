/**
 * Results coming in: from a stream of this replica (relayed to the replica that received the operation when it is
 * another one) or relayed here by the replica holding the stream. A result is recorded only when it comes from the
 * session the operation was sent on (or the session that resumed it), checked against its type's rules, scrubbed of
 * Secret data and of the request's Secret values in its message, by one conditional update — the first writer wins
 * (docs/architecture.md, rules 6 and 9). Anything else is ignored, logged and counted by reason.
 */
import { toJson } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { OperationResultSchema, type OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import { isTransactionConflict } from '../../db/transient-error.js';
import type { OperationHooks } from '../agents/operation-hooks.js';
import type { LiveSession } from '../agents/session-registry.js';
import type { IgnoredResultReason } from '../metrics/gateway-metrics.js';
import type { OperationContext } from './operation-context.js';
import { isTerminal } from './operation-state.js';
import type { Outcome, ResultItem } from './operation-store.js';
import { redactRequestValues, requestKind, scrubResultSecrets } from './result-scrub.js';
import { invalidResult, resultShapeProblem } from './result-shape.js';
import { createWriteBatcher } from './write-batcher.js';

/** A result source: a live stream of this replica, or the session a relayed result names. */
type ResultSender = Pick<LiveSession, 'id' | 'agentId' | 'serves'>;

/** The result side of the manager (see OperationManager in operation-manager.ts for `relayedResult`). */
export interface ResultIntake extends Pick<OperationHooks, 'resultReceived'> {
  relayedResult(result: OperationResult, sessionId: string, sessionToken: string): Promise<void>;
}

/** Creates the intake over the shared context. */
export function createResultIntake(ctx: OperationContext): ResultIntake {
  const { store, log, locals, settle, report, deps } = ctx;
  // Results recorded close together share one statement; a conditional update, safe to run again after a conflict.
  const finishes = createWriteBatcher((items: ResultItem[]) => store.finishMany(items), { retryOn: isTransactionConflict });

  async function relayOrRecord(session: LiveSession, result: OperationResult): Promise<void> {
    const origin = result.id && !locals.has(result.id) ? deps.relay?.originOf(result.id) : undefined;
    // This replica sent it on that session for its origin: when it records the result itself, it vouches for it.
    const sentHere = origin !== undefined && deps.relay!.sentOn(result.id) === session.id;
    if (origin && (await deps.relay!.send(origin, result, session))) return;
    await recordResult(session, result, sentHere);
  }

  /** Records the result when its session may answer it; otherwise says why it was ignored (logged and counted). */
  async function recordResult(session: ResultSender, result: OperationResult, sentHere = false): Promise<'recorded' | IgnoredResultReason> {
    const id = result.id;
    const rlog = log.child({ operationId: id, agentId: session.agentId, sessionId: session.id });
    const ignore = (reason: IgnoredResultReason, message: string, fields: Record<string, unknown> = {}) => {
      deps.metrics?.resultIgnored(reason);
      rlog.warn(fields, message);
      return reason;
    };
    if (!id) return ignore('no_id', 'operation_result without an id ignored');
    const local = locals.get(id);
    let account = local?.account ?? result.account;
    if (!account || !session.serves(account)) {
      const row = await store.get(id);
      if (!row) return ignore('unknown_operation', 'result for an unknown operation ignored');
      account = row.account;
    }
    if (!session.serves(account)) {
      return ignore('account_not_served', "result from a session that does not serve the operation's account ignored", { account });
    }
    // Only the stream session the operation was sent on answers it (or the session that resumed it with its token,
    // which re-pointed the row): not another agent serving the account (a STANDBY stream, maybe of another identity),
    // nor a stream that merely announces the same agent id. The store re-checks the row's session (sent by another
    // replica, or re-pointed by a resumption there); memory vouches only while the SENT mark is not written yet.
    if (local && !local.sent && local.delivering > 0) await local.dispatching;
    const vouched = sentHere || local?.sent?.sessionId === session.id;
    const stored = local?.row ?? deps.relay?.rowOf(id) ?? (await store.get(id));
    const problem = stored ? resultShapeProblem(stored.type, stored.request, account, result) : undefined;
    if (problem) result = invalidResult(result, problem);
    const resultJson = toJson(OperationResultSchema, result) as Record<string, unknown>;
    const kind = requestKind(stored?.request);
    const scrubbed = scrubResultSecrets(resultJson, kind);
    if (scrubbed > 0)
      rlog.warn({ account, objects: scrubbed }, 'Secret data removed from an operation result (the agent should have removed it)');
    if (stored && (await redactRequestValues(resultJson, stored, ctx.sealer)))
      rlog.warn({ account }, "the request's Secret values removed from an operation result's message (the agent should have removed them)");
    const outcome: Outcome = {
      state: result.success ? 'SUCCEEDED' : 'FAILED',
      result: resultJson,
      at: new Date(),
      agentId: session.agentId,
      sessionId: session.id,
      sentAt: local?.sent?.sentAt,
    };
    const row = await finishes.add({ id, account, outcome, vouched });
    if (row) {
      if (problem) {
        deps.metrics?.resultInvalid(row.type);
        rlog.warn({ account, problem }, 'operation result breaks the result rules of its type: recorded FAILED (InvalidResult)');
      }
      settle(row);
      return 'recorded';
    }
    const current = await store.get(id);
    if (!current) return ignore('unknown_operation', 'result for an unknown operation ignored');
    if (isTerminal(current.state)) {
      deps.metrics?.resultIgnored('already_finished');
      rlog.info({ state: current.state }, 'duplicate or late operation result ignored');
      return 'already_finished';
    }
    if (current.account !== account)
      return ignore('account_not_served', 'result for an operation of another account ignored', { account: current.account });
    return ignore('wrong_session', 'result from a session the operation was not sent on ignored', {
      sentTo: current.agentId,
      sentOn: current.sessionId,
    });
  }

  return {
    resultReceived(session, result) {
      relayOrRecord(session, result).catch(report('could not record an operation result', result.id));
    },

    async relayedResult(result, sessionId, sessionToken) {
      const sender = deps.verifySession ? await deps.verifySession(sessionId, sessionToken) : undefined;
      if (!sender) throw new ConnectError('invalid session token', Code.Unauthenticated);
      const account = result.account || (await store.get(result.id))?.account;
      if (!account || !sender.accounts.includes(account)) {
        throw new ConnectError(`session ${sessionId} does not serve account ${JSON.stringify(account ?? '')}`, Code.PermissionDenied);
      }
      const outcome = await recordResult({ id: sender.id, agentId: sender.agentId, serves: (a) => sender.accounts.includes(a) }, result);
      if (outcome === 'wrong_session') {
        throw new ConnectError(
          `operation ${result.id} was not sent on session ${sessionId} (nor on one it resumed)`,
          Code.PermissionDenied,
        );
      }
    },
  };
}
