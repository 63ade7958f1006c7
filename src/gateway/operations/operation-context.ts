/**
 * What the parts of the operations feature share on one replica (operation-manager.ts composes them): its
 * dependencies, the operations this replica received and still tracks in memory, the notifier waiters listen on, the
 * shutdown signal, and the one way an operation is settled (its terminal row published, counted and logged). Nothing
 * here touches the database.
 */
import type { Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { Logger } from '../../shared/logger.js';
import type { OperationRecorder } from '../metrics/gateway-metrics.js';
import type { Dispatch, DispatchTarget } from '../replicas/dispatch.js';
import { createOperationNotifier, type OperationNotifier } from './operation-notifier.js';
import type { OperationSealer } from './operation-sealing.js';
import type { OperationRow, OperationStore, SentTarget } from './operation-store.js';
import type { ResultRelay } from './result-relay.js';

/** The `operations` section of the gateway configuration. */
interface OperationsConfig {
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
interface RelaySender {
  id: string;
  agentId: string;
  /** Accounts the session serves (caching or standby). */
  accounts: string[];
}

/** An operation this replica received and that is not settled yet: its timers and what memory knows of its sending. */
export interface LocalOperation {
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

/**
 * The shared state of one manager. Every part reads and changes `locals` on the same event loop turn it decides on
 * (no await between a check and the change it guards), which is what keeps the at-most-once rules of
 * docs/architecture.md, rule 6.
 */
export interface OperationContext {
  deps: OperationManagerDeps;
  store: OperationStore;
  sealer: OperationSealer;
  config: OperationsConfig;
  log: Logger;
  notifier: OperationNotifier;
  /** Operations this replica received and has not settled, by id. */
  locals: Map<string, LocalOperation>;
  /** Aborts once the manager closes. */
  closing: AbortSignal;
  pollIntervalMs: number;
  /** Validation limits of submissions. */
  limits: { defaultTimeoutMs: number; maxManifestBytes: number };
  agentWaitMs: number;
  /** The operation reached `row`, a terminal row as written: stops its timers, wakes its waiters, counts and logs it. */
  settle(row: OperationRow): void;
  /** {@link settle} without counting: another replica recorded `row` and counted it (a one-hop forward's answer). */
  settleRecordedElsewhere(row: OperationRow): void;
  /** A rejection handler that logs `what` unless the manager is closing (its failures are then expected). */
  report(what: string, id: string): (err: unknown) => void;
  /** Aborts `closing`, stops every operation's timers and forgets them. Idempotent. */
  shutdown(): void;
}

/** Creates the shared state; nothing runs until a part arms a timer. */
export function createOperationContext(deps: OperationManagerDeps): OperationContext {
  const { store, config, sealer } = deps;
  const log = deps.logger;
  const notifier = createOperationNotifier();
  const locals = new Map<string, LocalOperation>();
  const closing = new AbortController();

  const stopTimers = (local: LocalOperation) => {
    clearTimeout(local.deadlineTimer);
    clearTimeout(local.waitTimer);
    clearTimeout(local.retryTimer);
  };

  function settle(row: OperationRow, counted: boolean): void {
    const local = locals.get(row.id);
    if (local) {
      stopTimers(local);
      local.final = row;
      locals.delete(row.id);
    }
    notifier.publish(row);
    if (counted) deps.metrics?.finished(row.type, row.state, ((row.finishedAt ?? new Date()).getTime() - row.receivedAt.getTime()) / 1000);
    log.debug({ operationId: row.id, account: row.account, state: row.state, error: row.error || undefined }, 'operation finished');
  }

  return {
    deps,
    store,
    sealer,
    config,
    log,
    notifier,
    locals,
    closing: closing.signal,
    pollIntervalMs: deps.pollIntervalMs ?? 1000,
    limits: { defaultTimeoutMs: Math.round(config.defaultTimeoutSeconds * 1000), maxManifestBytes: config.maxManifestBytes },
    agentWaitMs: Math.round(config.agentWaitSeconds * 1000),

    settle(row) {
      settle(row, true);
    },

    settleRecordedElsewhere(row) {
      settle(row, false);
    },

    report: (what, id) => (err) => {
      if (!closing.signal.aborted) log.error({ err, operationId: id }, what);
    },

    shutdown() {
      if (closing.signal.aborted) return;
      closing.abort();
      for (const local of locals.values()) stopTimers(local);
      locals.clear();
    },
  };
}
