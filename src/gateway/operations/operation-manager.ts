/**
 * The gateway side of operations: submit (validate → store PENDING → dispatch → SENT), results recorded once,
 * redelivery to newly started agent sessions, the agent-wait timer, per-operation deadline timers plus a sweeper for
 * every row (also those of a replica that died), and start-up recovery. The API and REST layers call only this.
 */
import { toJson } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { OperationResultSchema, type Operation, type OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import { OperationState, type ListOperationsRequest, type SubmitOperationRequest } from '../../gen/outpost/api/v1/operation_service_pb.js';
import type { Logger } from '../../shared/logger.js';
import type { OperationHooks } from '../agents/operation-hooks.js';
import type { LiveSession } from '../agents/session-registry.js';
import type { Dispatch, DispatchTarget } from '../replicas/dispatch.js';
import type { ResultRelay } from './result-relay.js';
import type { OperationRecorder } from '../metrics/gateway-metrics.js';
import { invalidArgument } from '../errors.js';
import { createOperationNotifier, type OperationNotifier } from './operation-notifier.js';
import { decodeOperationPageToken, encodeOperationPageToken } from './operation-page-token.js';
import { isTerminal, stateFromEnum } from './operation-state.js';
import type { NewOperationRow, OperationRow, OperationStore, Outcome, ResultItem, SentTarget } from './operation-store.js';
import type { IgnoredResultReason } from '../metrics/gateway-metrics.js';
import { durationToMs, msToDuration, validateSubmission } from './operation-validation.js';
import { watchOperation } from './operation-watch.js';
import type { OperationSealer } from './operation-sealing.js';
import { requestKind, scrubResultSecrets } from './result-scrub.js';
import { invalidResult, resultShapeProblem } from './result-shape.js';
import { createWriteBatcher } from './write-batcher.js';
import { isTransactionConflict } from '../../db/transient-error.js';

/** The `operations` section of the gateway configuration. */
export interface OperationsConfig {
  defaultTimeoutSeconds: number;
  agentWaitSeconds: number;
  sweepIntervalMs: number;
  maxManifestBytes: number;
}

/** What the manager needs. */
export interface OperationManagerDeps {
  gatewayId: string;
  store: OperationStore;
  /** How requests are stored: Secret values redacted for readers and sealed for dispatch (operation-sealing.ts). */
  sealer: OperationSealer;
  dispatch: Dispatch;
  config: OperationsConfig;
  logger: Logger;
  /** How often waiters re-read a row for changes made by other replicas; default 1000. */
  pollIntervalMs?: number;
  /** Sends to this replica's streams only (operations forwarded here); forwarding is refused without it. */
  dispatchLocal?: (account: string, operation: Operation) => DispatchTarget | undefined;
  /** Results of operations of other replicas go back through it; recorded here without it. */
  relay?: ResultRelay;
  /** Records terminal operations and ignored results; none when absent. */
  metrics?: Pick<OperationRecorder, 'finished' | 'resultIgnored' | 'resultInvalid'>;
  /** Checks a relayed result's session token; relayed results are refused without it. */
  verifySession?: (sessionId: string, token: string) => Promise<RelaySender | undefined>;
}

/** The stream a relayed result came on, as its session row describes it. */
export interface RelaySender {
  id: string;
  agentId: string;
  /** Accounts the session serves (caching or standby). */
  accounts: string[];
}

/** A result source: a live stream of this replica, or the session a relayed result names. */
type ResultSender = Pick<LiveSession, 'id' | 'agentId' | 'serves'>;

/** Default and largest ListOperations page sizes. */
export const DEFAULT_OPERATION_PAGE_SIZE = 50;
export const MAX_OPERATION_PAGE_SIZE = 500;
/** Error of operations that found no agent within `agentWaitSeconds`. */
export const noAgentError = (account: string) => `no agent connected for account ${account}`;
/** How often an operation no stream took is dispatched again while it waits for an agent. */
const DISPATCH_RETRY_MS = 500;
/** Error of this replica's operations that were open when it restarted and are past their deadline. */
export const RESTART_ERROR = 'gateway restarted before the result arrived';

/** The operations feature of one gateway replica. */
export interface OperationManager extends OperationHooks {
  /**
   * Validates, stores, dispatches; with `req.wait`, returns once terminal (or at the deadline). `requestedBy` is
   * recorded on the row: who submitted it (an identity, plus the Spinnaker user for Spinnaker tasks).
   */
  submit(req: SubmitOperationRequest, signal?: AbortSignal, requestedBy?: string): Promise<OperationRow>;
  /** NOT_FOUND when unknown. */
  get(id: string): Promise<OperationRow>;
  /** The row now, then on each state change, ending after a terminal one. Ends with UNAVAILABLE on shutdown. */
  watch(id: string, signal?: AbortSignal): AsyncIterable<OperationRow>;
  list(
    req: Pick<ListOperationsRequest, 'account' | 'state' | 'pageSize' | 'pageToken'>,
  ): Promise<{ rows: OperationRow[]; nextPageToken: string }>;
  /** Page `page` (1-based) of `items` rows, newest first, with the total (REST). */
  page(page: number, items: number): Promise<{ rows: OperationRow[]; total: number }>;
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
   * Undefined when no local stream could take it.
   */
  acceptForwarded(origin: string, operation: Operation): Promise<DispatchTarget | undefined>;
  /**
   * A result relayed by the replica holding the stream: UNAUTHENTICATED for a wrong session token, PERMISSION_DENIED
   * when that session does not serve the operation's account; recorded once otherwise.
   */
  relayedResult(result: OperationResult, sessionId: string, sessionToken: string): Promise<void>;
}

interface LocalOperation {
  /** The row as stored (what a retry dispatches). */
  row: OperationRow;
  account: string;
  deadlineAt: number;
  waitUntil: number;
  deadlineTimer?: NodeJS.Timeout;
  waitTimer?: NodeJS.Timeout;
  retryTimer?: NodeJS.Timeout;
  /** The first send (memory knows it before the SENT update is written, or instead of it). */
  sent?: SentTarget;
  /**
   * Settles when the latest dispatch returned: a result relayed back by the replica that took a forward can arrive
   * before the forward's answer, and waits for it to learn which session the operation was sent on.
   */
  dispatching?: Promise<void>;
  delivering: number;
  /** The terminal row, once settled (the submitter returns it without reading the row again). */
  final?: OperationRow;
}

/** A freshly inserted row as the database now holds it (column defaults applied), without reading it back. */
function insertedRow(row: NewOperationRow): OperationRow {
  return { result: null, error: '', agentId: '', sessionId: '', sentAt: null, resultAt: null, finishedAt: null, ...row } as OperationRow;
}

/** Creates the manager; call {@link OperationManager.recover} then {@link OperationManager.start} before serving. */
export function createOperationManager(deps: OperationManagerDeps): OperationManager {
  const { store, config, sealer } = deps;
  const log = deps.logger;
  const notifier: OperationNotifier = createOperationNotifier();
  const pollIntervalMs = deps.pollIntervalMs ?? 1000;
  const locals = new Map<string, LocalOperation>();
  const knownAccounts = new Set<string>();
  const closing = new AbortController();
  let sweeper: NodeJS.Timeout | undefined;
  let sweeping = false;

  // Hot-path writes issued close together share one statement and one commit (see write-batcher.ts). The sent marks
  // and results are conditional updates, safe to run again after a deadlock or serialization failure.
  const retry = { retryOn: isTransactionConflict };
  const inserts = createWriteBatcher((rows: NewOperationRow[]) => store.insertMany(rows));
  const sentWrites = createWriteBatcher(async (items: { id: string; target: SentTarget; local?: LocalOperation }[]) => {
    // Already settled (its result or deadline came first): the terminal update carried sent_at, nothing to write.
    const due = items.filter((i) => !i.local?.final);
    const changed = await store.markSentMany(due.map((i) => ({ id: i.id, ...i.target })));
    const byItem = new Map(due.map((item, n) => [item, changed[n]!]));
    return items.map((i) => byItem.get(i) ?? false);
  }, retry);
  const finishes = createWriteBatcher((items: ResultItem[]) => store.finishMany(items), retry);

  const limits = { defaultTimeoutMs: Math.round(config.defaultTimeoutSeconds * 1000), maxManifestBytes: config.maxManifestBytes };
  const agentWaitMs = Math.round(config.agentWaitSeconds * 1000);

  const settle = (row: OperationRow) => {
    const local = locals.get(row.id);
    if (local) {
      clearTimeout(local.deadlineTimer);
      clearTimeout(local.waitTimer);
      clearTimeout(local.retryTimer);
      local.final = row;
      locals.delete(row.id);
    }
    notifier.publish(row);
    deps.metrics?.finished(row.type, row.state, ((row.finishedAt ?? new Date()).getTime() - row.receivedAt.getTime()) / 1000);
    log.debug({ operationId: row.id, account: row.account, state: row.state, error: row.error || undefined }, 'operation finished');
  };
  const report = (what: string, id: string) => (err: unknown) => {
    if (!closing.signal.aborted) log.error({ err, operationId: id }, what);
  };

  const track = (row: OperationRow) => {
    const local: LocalOperation = {
      account: row.account,
      deadlineAt: row.deadlineAt.getTime(),
      row,
      waitUntil: row.receivedAt.getTime() + agentWaitMs,
      delivering: 0,
    };
    local.deadlineTimer = setTimeout(
      () => {
        const now = new Date(Math.max(Date.now(), local.deadlineAt));
        store.expire(now, { ids: [row.id] }).then((rows) => rows.forEach(settle), report('could not time out the operation', row.id));
      },
      Math.max(0, local.deadlineAt - Date.now()),
    );
    local.deadlineTimer.unref();
    locals.set(row.id, local);
    return local;
  };

  /**
   * No stream took the operation: it is dispatched again every {@link DISPATCH_RETRY_MS} (an agent may connect to any
   * replica; this replica, which received it, is its only dispatcher while it is PENDING) and fails after the agent
   * wait.
   */
  const armAgentWait = (id: string, local: LocalOperation) => {
    clearTimeout(local.waitTimer);
    clearTimeout(local.retryTimer);
    const retryAt = Math.min(Date.now() + DISPATCH_RETRY_MS, Math.min(local.waitUntil, local.deadlineAt));
    local.retryTimer = setTimeout(
      () => {
        local.retryTimer = undefined;
        if (local.sent || local.delivering > 0 || !locals.has(id) || Date.now() >= Math.min(local.waitUntil, local.deadlineAt)) return;
        deliver(local.row).catch(report('could not dispatch the operation again', id));
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

  /**
   * Dispatches an open row with its remaining time (to `via` only, when given: a redelivery to the session it was sent
   * on); returns the SENT row, or undefined when no agent took it. The
   * SENT update is batched; with `durable` the call waits for it (and returns the row as stored when the operation
   * ended meanwhile), otherwise it is written in the background — the result's update carries sent_at anyway.
   */
  const deliver = async (
    row: OperationRow,
    operation?: Operation,
    durable = true,
    via?: LiveSession,
  ): Promise<OperationRow | undefined> => {
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
        const error = `operation cannot be sent: ${err instanceof ConnectError ? err.rawMessage : (err as Error).message}`;
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

  const accountExists = async (name: string) => {
    if (knownAccounts.has(name)) return true;
    const exists = await store.accountExists(name);
    if (exists) knownAccounts.add(name);
    return exists;
  };

  const waitTerminal = async (row: OperationRow, signal?: AbortSignal): Promise<OperationRow> => {
    // The deadline timer ends it at the deadline; the grace covers a sweeper on another replica.
    const until = AbortSignal.timeout(Math.max(0, row.deadlineAt.getTime() - Date.now()) + pollIntervalMs + 500);
    const stop = AbortSignal.any([until, closing.signal, ...(signal ? [signal] : [])]);
    let last = row;
    // Still tracked → not settled yet, so `row` is current and any later change will be notified to the watch
    // (which subscribes in this same tick). Settled meanwhile → read it again.
    const initial = locals.has(row.id) ? row : undefined;
    for await (const r of watchOperation(row.id, { store, notifier, pollIntervalMs }, stop, initial)) last = r;
    if (signal?.aborted) throw new ConnectError('request cancelled', Code.Canceled);
    return last;
  };

  return {
    async submit(req, signal, requestedBy = '') {
      const receivedAt = new Date();
      const v = validateSubmission(req, limits);
      if (!(await accountExists(req.account))) {
        throw new ConnectError(`unknown account ${JSON.stringify(req.account)}: no agent has registered it`, Code.NotFound);
      }
      const id = v.operation.id;
      const stored = await sealer.seal(v.operation);
      const newRow: NewOperationRow = {
        id,
        account: req.account,
        type: v.type,
        request: stored.requestJson,
        state: 'PENDING',
        gatewayId: deps.gatewayId,
        timeoutMs: v.timeoutMs,
        receivedAt,
        storedAt: new Date(),
        deadlineAt: new Date(receivedAt.getTime() + v.timeoutMs),
        requestHash: stored.requestHash,
        requestedBy,
      };
      let row: OperationRow;
      if (!(await inserts.add(newRow))) {
        const existing = await store.get(id);
        if (!existing) throw new ConnectError(`operation ${id} could not be stored; retry`, Code.Aborted);
        // Same redacted form: the sealed values decide (a row whose key is gone is taken as the same request).
        if (existing.requestHash !== stored.requestHash || (stored.sealed && (await sealer.compare(v.operation, existing)) === 'differs')) {
          throw new ConnectError(`operation id ${JSON.stringify(id)} was already used for a different request`, Code.AlreadyExists);
        }
        row = existing;
      } else {
        const inserted = insertedRow(newRow);
        notifier.publish(inserted);
        const local = track(inserted);
        log.debug({ operationId: id, account: req.account, type: v.type }, 'operation stored');
        // A waiting caller needs no durable SENT (the result's update records sent_at); a non-waiting one returns it.
        row = (await deliver(inserted, v.operation, !req.wait)) ?? inserted;
        // Settled meanwhile (result, deadline or agent wait): that row is the latest.
        if (local.final) row = local.final;
      }
      if (req.wait && !isTerminal(row.state)) row = await waitTerminal(row, signal);
      return row;
    },

    async get(id) {
      const row = await store.get(id);
      if (!row) throw new ConnectError(`operation ${JSON.stringify(id)} not found`, Code.NotFound);
      return row;
    },

    async *watch(id, signal) {
      const stop = signal ? AbortSignal.any([signal, closing.signal]) : closing.signal;
      let last: OperationRow | undefined;
      for await (const row of watchOperation(id, { store, notifier, pollIntervalMs }, stop)) {
        last = row;
        yield row;
      }
      if (closing.signal.aborted && last && !isTerminal(last.state)) {
        throw new ConnectError('gateway is shutting down; wait for the operation again', Code.Unavailable);
      }
    },

    async list(req) {
      if (req.pageSize < 0) throw invalidArgument('page_size must not be negative');
      const pageSize = req.pageSize === 0 ? DEFAULT_OPERATION_PAGE_SIZE : Math.min(req.pageSize, MAX_OPERATION_PAGE_SIZE);
      const state = req.state === OperationState.UNSPECIFIED ? undefined : stateFromEnum(req.state);
      if (req.state !== OperationState.UNSPECIFIED && !state) throw invalidArgument(`state ${req.state} is not a known operation state`);
      const filters = { account: req.account, state: state ?? '' };
      const after = req.pageToken ? decodeOperationPageToken(req.pageToken, filters) : undefined;
      const rows = await store.list({ account: req.account || undefined, state }, pageSize + 1, after);
      const more = rows.length > pageSize;
      const page = more ? rows.slice(0, pageSize) : rows;
      const last = page[page.length - 1];
      return { rows: page, nextPageToken: more && last ? encodeOperationPageToken(last, filters) : '' };
    },

    page: (page, items) => store.page((page - 1) * items, items),

    async recover() {
      let total = 0;
      for (;;) {
        const rows = await store.expire(new Date(), { gatewayId: deps.gatewayId, error: RESTART_ERROR, limit: 1000 });
        total += rows.length;
        if (rows.length < 1000) break;
      }
      if (total > 0) log.warn({ count: total }, 'operations left open by a restart timed out');
      return total;
    },

    start() {
      if (sweeper || closing.signal.aborted) return;
      sweeper = setInterval(() => {
        if (sweeping) return;
        sweeping = true;
        store
          .expire(new Date(), { limit: 1000 })
          .then(
            (rows) => {
              for (const row of rows) {
                log.info({ operationId: row.id, account: row.account, error: row.error }, 'operation timed out (sweeper)');
                settle(row);
              }
            },
            report('operation sweep failed', ''),
          )
          .finally(() => (sweeping = false));
      }, config.sweepIntervalMs);
      sweeper.unref();
    },

    close() {
      if (closing.signal.aborted) return;
      closing.abort();
      clearInterval(sweeper);
      for (const local of locals.values()) {
        clearTimeout(local.deadlineTimer);
        clearTimeout(local.waitTimer);
        clearTimeout(local.retryTimer);
      }
      locals.clear();
    },

    sessionStarted(session, accountNames) {
      (async () => {
        // A SENT operation goes again only to the session it was sent on, as resumed by this one (the agent process
        // that received it de-duplicates on its id): another agent, or a restarted one, could apply it a second time.
        // A PENDING one only from the replica that received it, and only while nothing sent it yet: it is that
        // replica's alone to dispatch (another replica's copy of the row may be stale by the time it reads it, and two
        // dispatchers could reach two agents).
        const rows = (await store.openFor(accountNames, new Date())).filter((r) => {
          if (r.state !== 'PENDING') return r.sessionId === session.id;
          const local = locals.get(r.id);
          return local !== undefined && !local.sent && local.delivering === 0;
        });
        if (rows.length === 0) return;
        log.info(
          { sessionId: session.id, agentId: session.agentId, count: rows.length },
          'delivering open operations to a new agent session',
        );
        // SENT rows go back on this session only (through dispatch they could reach the account's caching stream,
        // another agent, which would apply them a second time); PENDING ones to whichever stream dispatch picks.
        await Promise.all(rows.map((row) => deliver(row, undefined, true, row.state === 'PENDING' ? undefined : session)));
      })().catch(report('could not deliver open operations to a new session', ''));
    },

    async sessionResumed(fromSessionId, session) {
      const moved = await store.repointSession(fromSessionId, session.id);
      for (const local of locals.values()) {
        if (local.sent?.sessionId === fromSessionId) local.sent = { ...local.sent, sessionId: session.id };
      }
      if (moved > 0)
        log.info({ fromSessionId, sessionId: session.id, count: moved }, 'open operations now answered by the resuming session');
    },

    resultReceived(session, result) {
      relayOrRecord(session, result).catch(report('could not record an operation result', result.id));
    },

    async acceptForwarded(origin, operation) {
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
    const stored = local?.row ?? (await store.get(id));
    const problem = stored ? resultShapeProblem(stored.type, stored.request, account, result) : undefined;
    if (problem) result = invalidResult(result, problem);
    const resultJson = toJson(OperationResultSchema, result) as Record<string, unknown>;
    const kind = requestKind(stored?.request);
    const scrubbed = scrubResultSecrets(resultJson, kind);
    if (scrubbed > 0)
      rlog.warn({ account, objects: scrubbed }, 'Secret data removed from an operation result (the agent should have removed it)');
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
}
