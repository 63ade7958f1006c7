/**
 * Reads of a cluster that write nothing (docs/architecture.md, rule 6): a `get`, `list`, `logs` or `history` changes
 * nothing in the cluster, so it needs none of what makes an operation safe to run once — no stored row, no SENT mark,
 * no deadline sweeper, no redelivery. It is sent as an `Operation` on a stream serving the account (the agent runs
 * it live against the API server, so a read is never older than a write Outpost finished before it), its result is
 * awaited in memory, checked against its type's rules and scrubbed of Secret data as a stored result is, and handed
 * to the caller; on another replica's stream it goes one hop with its caller, who is admitted again there
 * (src/gateway/operations/read-forward.ts). Every read gets a fresh id for the agent (`read-<uuid>`): the agent keeps results by id, so a
 * reused id must never return an older answer.
 *
 * A read whose stream ends before its answer is tried again, and one no stream serves waits for one, as an operation
 * waits for its agent (`operations.agentWaitSeconds`), all within its time: reading twice is harmless, so a read goes
 * through an agent's reconnect or a failover. One past its time is TIMED_OUT; one that found no stream in the wait
 * FAILED. A result arriving later for a read that ended is dropped quietly.
 */
import { randomUUID } from 'node:crypto';
import { create, toJson } from '@bufbuild/protobuf';
import { OperationResultSchema, OperationSchema, type Operation, type OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { Logger } from '../../shared/logger.js';
import { Code, ConnectError } from '@connectrpc/connect';
import type { OperationHooks } from '../agents/operation-hooks.js';
import type { LiveSession } from '../agents/session-registry.js';
import type { AccountScopedRole, Principal } from '../auth/principal.js';
import type { OperationRecorder, ReadRecorder, ReadVia } from '../metrics/gateway-metrics.js';
import type { OperationRow } from './operation-store.js';
import { formatMs, msToDuration } from '../../shared/durations.js';
import { requestKind, scrubResultSecrets } from './result-scrub.js';
import { invalidResult, resultShapeProblem } from './result-shape.js';

/** The operation types that only read a cluster. */
const READ_TYPES = ['get', 'list', 'logs', 'history'] as const;
/** One of {@link READ_TYPES}. */
export type ReadType = (typeof READ_TYPES)[number];

/** True for a type that only reads (`get`, `list`, `logs`, `history`). */
export function isReadType(type: string | undefined): type is ReadType {
  return (READ_TYPES as readonly (string | undefined)[]).includes(type);
}

/** A read as the API serves it: the shape of an operation row, never stored (`storedAt` is null). */
export type ReadRow = Omit<OperationRow, 'storedAt'> & { storedAt: null };

/** A read to run: the account, the spec, its time, and the id the caller knows it by (its own, or the agent's). */
export interface ReadRequest {
  account: string;
  spec: Operation['spec'];
  timeoutMs: number;
  /** The id shown to the caller; the agent's (`read-<uuid>`) when empty. */
  id?: string;
  /** Who asked (recorded on the row the caller gets back, as on operations). */
  requestedBy: string;
  /** When the request arrived (the row's receivedAt); now when absent. */
  receivedAt?: Date;
  /** When it must have ended (a read tried again keeps its first deadline); `receivedAt + timeoutMs` when absent. */
  deadlineAt?: Date;
}

/** A read that a local stream took: where it went, and its end. */
interface LocalRead {
  agentId: string;
  sessionId: string;
  /** The terminal row; never rejects. */
  row: Promise<ReadRow>;
}

/**
 * Who a read is for, as the replica holding the stream admits it again: the caller's principal and the role whose
 * account rules allowed it here (`write` on the operations API, `spinnaker` on the Clouddriver routes).
 */
export interface ReadCaller {
  principal: Principal;
  role: Extract<AccountScopedRole, 'write' | 'spinnaker'>;
}

/**
 * Runs a read on another replica whose stream serves the account (src/gateway/operations/read-forward.ts): its terminal row, or undefined
 * when no replica took it. Throws a PERMISSION_DENIED ConnectError when the holding replica's rules refuse the caller.
 */
export type ForwardRead = (request: ReadRequest, caller: ReadCaller) => Promise<ReadRow | undefined>;

/** The session a read went out on: what its end is told by. */
export type ReadSession = Pick<LiveSession, 'id' | 'agentId' | 'done'>;

/** What {@link createReadRunner} needs. */
export interface ReadRunnerDeps {
  gatewayId: string;
  /** Sends `operation` on a stream of this replica serving the account; undefined when none took it. */
  sendLocal(account: string, operation: Operation): ReadSession | undefined;
  /** Passes reads no local stream serves to the replica holding one; local streams only when absent. */
  forward?: ForwardRead;
  /** Whether the account is known (asked only when no stream serves it: NOT_FOUND then, as for operations). */
  accountExists(account: string): Promise<boolean>;
  /**
   * How long a read waits for a stream to serve its account, within its own time, when none does (or the one it went
   * to ended): `operations.agentWaitSeconds`, as operations wait, so a read survives an agent's reconnect or a failover.
   */
  agentWaitMs: number;
  /** Counts reads, and results that break their type's rules (as for stored operations); none when absent. */
  metrics?: ReadRecorder & Pick<OperationRecorder, 'resultInvalid'>;
  logger: Logger;
}

/** See the module comment. */
export interface ReadRunner {
  /**
   * Runs the read on a stream serving the account — here, else on the replica holding one — and returns its terminal
   * row: SUCCEEDED, FAILED (the cluster's refusal, a stream that ended, no agent serving the account) or TIMED_OUT.
   * Throws NOT_FOUND for an unknown account, PERMISSION_DENIED when the holding replica refuses the caller.
   */
  run(request: ReadRequest, caller: ReadCaller): Promise<ReadRow>;
  /** Runs the read on a stream of this replica; undefined when none serves the account. */
  startLocal(request: ReadRequest): LocalRead | undefined;
  /**
   * Takes a result when it answers a read sent on `session` (or one that already ended); false when it is not a
   * read's (the operations feature then handles it).
   */
  takeResult(session: Pick<LiveSession, 'id'>, result: OperationResult): boolean;
  /** Ends every pending read FAILED (the gateway is shutting down). Idempotent. */
  close(): void;
}

/** The error of a read whose stream ended before its result came: it is tried again while its time lasts. */
const STREAM_ENDED = "the agent stream ended before the read's result came";
/** First and longest pause between tries of a read no stream took. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 500;

/** True for a row that ended because its stream did (nothing was answered: the read may be tried again). */
function streamEnded(row: ReadRow): boolean {
  return row.state === 'FAILED' && row.result === null && row.error.startsWith(STREAM_ENDED);
}

/** How many ended read ids are remembered, so that their late results are dropped quietly. */
const ENDED_IDS_KEPT = 10_000;

interface Pending {
  sessionId: string;
  account: string;
  type: ReadType;
  request: Record<string, unknown>;
  settle(state: ReadRow['state'], result: Record<string, unknown> | null, error: string): void;
}

/** The row of a read that never reached an agent (no stream anywhere): FAILED with `error`. */
function unservedRead(request: ReadRequest, gatewayId: string, error: string): ReadRow {
  const { row } = readRowBase(request, gatewayId, `read-${randomUUID()}`);
  const now = new Date();
  return { ...row, state: 'FAILED', error, finishedAt: now };
}

/** The operation a read sends (a fresh agent id) and its row before it ran. */
export function readRowBase(request: ReadRequest, gatewayId: string, agentId: string): { operation: Operation; row: ReadRow } {
  const receivedAt = request.receivedAt ?? new Date();
  const deadlineAt = request.deadlineAt ?? new Date(receivedAt.getTime() + request.timeoutMs);
  // The agent gets the time left (all of it on a first try).
  const operation = create(OperationSchema, {
    id: agentId,
    account: request.account,
    timeout: msToDuration(Math.max(1, Math.min(request.timeoutMs, deadlineAt.getTime() - Date.now()))),
    spec: request.spec,
  });
  // The record shows the read as asked: the caller's id and timeout (the agent gets the time left).
  const requestJson = toJson(
    OperationSchema,
    create(OperationSchema, { ...operation, id: request.id || agentId, timeout: msToDuration(request.timeoutMs) }),
  ) as Record<string, unknown>;
  const row: ReadRow = {
    id: request.id || agentId,
    account: request.account,
    type: request.spec.case ?? '',
    request: requestJson,
    state: 'PENDING',
    result: null,
    error: '',
    gatewayId,
    agentId: '',
    sessionId: '',
    timeoutMs: request.timeoutMs,
    receivedAt,
    storedAt: null,
    sentAt: null,
    resultAt: null,
    finishedAt: null,
    deadlineAt,
    requestHash: '',
    requestedBy: request.requestedBy,
  };
  return { operation, row };
}

/** Creates the reads of one replica. */
export function createReadRunner(deps: ReadRunnerDeps): ReadRunner {
  const pending = new Map<string, Pending>();
  const ended = new Set<string>();
  const log = deps.logger;
  let closed = false;

  const remember = (id: string) => {
    ended.add(id);
    if (ended.size > ENDED_IDS_KEPT) ended.delete(ended.values().next().value as string);
  };
  const finished = (row: ReadRow, via: ReadVia) =>
    deps.metrics?.readFinished(row.type, via, row.state, ((row.finishedAt ?? new Date()).getTime() - row.receivedAt.getTime()) / 1000);

  const startLocal: ReadRunner['startLocal'] = (request) => {
    if (closed) return undefined;
    const agentId = `read-${randomUUID()}`;
    const { operation, row } = readRowBase(request, deps.gatewayId, agentId);
    const session = deps.sendLocal(request.account, operation);
    if (!session) return undefined;
    const sentAt = new Date();
    const outcome = new Promise<ReadRow>((resolve) => {
      const timer = setTimeout(
        () =>
          settle(
            'TIMED_OUT',
            null,
            `read timed out after ${formatMs(request.timeoutMs)} waiting for the result from agent ${session.agentId}`,
          ),
        Math.max(0, row.deadlineAt.getTime() - Date.now()),
      );
      timer.unref();
      let done = false;
      const settle: Pending['settle'] = (state, result, error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        pending.delete(agentId);
        remember(agentId);
        const now = new Date();
        const final: ReadRow = {
          ...row,
          state,
          result,
          error,
          agentId: session.agentId,
          sessionId: session.id,
          sentAt,
          resultAt: result ? now : null,
          finishedAt: now,
        };
        finished(final, 'local');
        resolve(final);
      };
      pending.set(agentId, { sessionId: session.id, account: request.account, type: row.type as ReadType, request: row.request, settle });
      const streamGone = () => settle('FAILED', null, `${STREAM_ENDED} (account ${request.account}); retry`);
      session.done.then(streamGone, streamGone);
    });
    return { agentId: session.agentId, sessionId: session.id, row: outcome };
  };

  /** One try: on a local stream, else forwarded to the replica holding one; undefined when no stream took it. */
  const tryOnce = async (request: ReadRequest, caller: ReadCaller): Promise<ReadRow | undefined> => {
    const local = startLocal(request);
    if (local) return local.row;
    const ran = closed ? undefined : await deps.forward?.(request, caller);
    if (!ran) return undefined;
    // The replica that received it, as for operations (the agent's id says where it ran).
    const asked = readRowBase(request, deps.gatewayId, ran.id).row;
    const forwarded: ReadRow = {
      ...ran,
      gatewayId: deps.gatewayId,
      receivedAt: asked.receivedAt,
      request: asked.request,
      timeoutMs: asked.timeoutMs,
      deadlineAt: asked.deadlineAt,
    };
    finished(forwarded, 'forwarded');
    return forwarded;
  };

  return {
    startLocal,

    async run(request, caller) {
      const receivedAt = request.receivedAt ?? new Date();
      const deadline = receivedAt.getTime() + request.timeoutMs;
      const attempt: ReadRequest = { ...request, receivedAt, deadlineAt: new Date(deadline) };
      // A read changes nothing, so one whose stream ended unanswered is tried again, and one no stream takes waits for
      // one (an agent reconnecting, a failover), like an operation: within agentWaitMs of the last try, and its time.
      let waitUntil = Math.min(deadline, receivedAt.getTime() + deps.agentWaitMs);
      let pause = FIRST_RETRY_MS;
      let last: ReadRow | undefined;
      for (;;) {
        const row = await tryOnce(attempt, caller);
        if (row && !streamEnded(row)) return row;
        if (row) {
          last = row;
          waitUntil = Math.min(deadline, Date.now() + deps.agentWaitMs);
          pause = FIRST_RETRY_MS;
        }
        const left = waitUntil - Date.now();
        if (closed || left <= 0) break;
        await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
        pause = Math.min(pause * 2, MAX_RETRY_MS);
      }
      if (last) return last;
      if (!(await deps.accountExists(request.account))) {
        throw new ConnectError(`unknown account ${JSON.stringify(request.account)}: no agent has registered it`, Code.NotFound);
      }
      const row = unservedRead(attempt, deps.gatewayId, `no agent connected for account ${request.account}`);
      finished(row, 'unserved');
      return row;
    },

    takeResult(session, result) {
      const read = pending.get(result.id);
      if (!read || read.sessionId !== session.id) {
        if (!ended.has(result.id)) return false;
        log.debug({ operationId: result.id }, 'result of a read that already ended dropped');
        return true;
      }
      const problem = resultShapeProblem(read.type, read.request, read.account, result);
      const checked = problem ? invalidResult(result, problem) : result;
      if (problem) {
        deps.metrics?.resultInvalid(read.type);
        log.warn({ operationId: result.id, account: read.account, problem }, 'read result breaks the result rules of its type');
      }
      const json = toJson(OperationResultSchema, checked) as Record<string, unknown>;
      const scrubbed = scrubResultSecrets(json, requestKind(read.request));
      if (scrubbed > 0)
        log.warn({ account: read.account, objects: scrubbed }, 'Secret data removed from a read result (the agent should have removed it)');
      read.settle(checked.success ? 'SUCCEEDED' : 'FAILED', json, '');
      return true;
    },

    close() {
      if (closed) return;
      closed = true;
      for (const read of [...pending.values()]) read.settle('FAILED', null, 'the gateway is shutting down; retry');
    },
  };
}

/** The hooks agent sessions call, with results of reads taken by `reads` before the operations feature sees them. */
export function readsFirst(hooks: OperationHooks, reads: Pick<ReadRunner, 'takeResult'>): OperationHooks {
  return {
    sessionStarted: (session, accounts) => hooks.sessionStarted(session, accounts),
    sessionResumed: (from, session) => hooks.sessionResumed(from, session),
    resultReceived(session, result) {
      if (!reads.takeResult(session, result)) hooks.resultReceived(session, result);
    },
  };
}
