/**
 * The agent's operation runner, alive across stream sessions. It runs each operation id at most once: a result it
 * still holds is sent again for a redelivered id; an id still running is ignored (its result comes when done). At
 * most `concurrency` operations run at once, the rest wait their turn with their timeout already running. Results go
 * out on the current stream, or wait in a bounded outbox until the next session attaches. Operations for accounts
 * this agent does not serve fail at once with reason AccountNotServed.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { durationMs } from '@bufbuild/protobuf/wkt';
import type { Operation, OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { RetryPolicy } from './kube-calls.js';
import type { OperationSettings } from './operation-context.js';
import { OutpostReason } from './operation-error.js';
import { executeOperation, failureResult, operationType } from './operation-executor.js';
import { createResourceResolver, type ResourceResolver } from './resource-resolver.js';
import { createResultCache } from './result-cache.js';

/** Default timeout of an operation that carries none. */
const DEFAULT_OPERATION_TIMEOUT_MS = 30_000;

/** An account the agent can run operations for, or why it cannot. */
export type AccountLookup = { client: KubeClient } | { notServed: string };

/** Options of {@link createOperationRunner}. */
export interface OperationRunnerOptions {
  /** Looks an account up at the moment an operation for it arrives. */
  account: (name: string) => AccountLookup;
  settings: OperationSettings;
  retries: RetryPolicy;
  concurrency: number;
  resultCacheSize: number;
  resultTtlMs: number;
  outboxSize: number;
  logger: Logger;
}

/** An operation the runner holds right now (for the admin `/operations` endpoint). */
interface RunningOperation {
  id: string;
  account: string;
  /** The operation type: apply, delete, scale, patch, rollout, get, list, logs… */
  kind: string;
  /** `waiting` for a slot (more than `concurrency` operations at once), or `running`. */
  state: 'waiting' | 'running';
  /** When the agent received it (ms since the epoch). */
  receivedAt: number;
}

/** See the module comment. */
export interface OperationRunner {
  /** A session is up: results go to `send` from now on, starting with those that waited. */
  attach(send: (result: OperationResult) => void): void;
  /** The session ended: results wait in the outbox. */
  detach(): void;
  /** An operation from the gateway (new or redelivered). */
  submit(operation: Operation): void;
  /** Operations running or waiting for a slot. */
  readonly active: number;
  /** Results waiting for a stream. */
  readonly pending: number;
  /** The operations running or waiting for a slot, oldest first (a snapshot). */
  list(): RunningOperation[];
  /** Aborts every running operation and waits for them. */
  close(): Promise<void>;
}

/** Creates a runner (no session attached). */
export function createOperationRunner(options: OperationRunnerOptions): OperationRunner {
  const { logger } = options;
  const results = createResultCache(options.resultCacheSize, options.resultTtlMs);
  const running = new Map<string, Promise<void>>();
  const holding = new Map<string, RunningOperation>();
  const outbox: OperationResult[] = [];
  const waiting: (() => void)[] = [];
  const resolvers = new WeakMap<KubeClient, ResourceResolver>();
  const stop = new AbortController();
  const controllers = new Set<AbortController>();
  let slotsInUse = 0;
  let send: ((result: OperationResult) => void) | undefined;

  function deliver(result: OperationResult): void {
    if (send) {
      send(result);
      return;
    }
    outbox.push(result);
    if (outbox.length > options.outboxSize) {
      const dropped = outbox.shift()!;
      logger.warn(
        { operationId: dropped.id, account: dropped.account },
        'result outbox full: dropping the oldest result (still kept by id for a redelivery)',
      );
    }
  }

  async function slot(): Promise<void> {
    if (slotsInUse < options.concurrency) {
      slotsInUse++;
      return;
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  }

  function release(): void {
    const next = waiting.shift();
    if (next)
      next(); // the slot passes on
    else slotsInUse--;
  }

  function finish(operation: Operation, result: OperationResult): void {
    results.set(operation.id, result);
    logger.info(
      {
        operationId: operation.id,
        account: operation.account,
        type: operationType(operation),
        statusCode: result.statusCode,
        success: result.success,
        reason: result.reason || undefined,
        ms: Math.round(durationMs(result.duration!)),
      },
      'operation done',
    );
    deliver(result);
  }

  async function run(operation: Operation, client: KubeClient, receivedAt: number): Promise<void> {
    const requested = operation.timeout ? durationMs(operation.timeout) : 0;
    const timeoutMs = requested > 0 ? requested : DEFAULT_OPERATION_TIMEOUT_MS;
    // One controller per operation, aborted by its timeout or by close() (no listener on a long-lived signal).
    const controller = new AbortController();
    setMaxListeners(0, controller.signal); // parallel discovery calls all listen on it
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        controller.abort();
      },
      timeoutMs - (performance.now() - receivedAt),
    );
    controllers.add(controller);
    const signal = controller.signal;
    let resolver = resolvers.get(client);
    if (!resolver) resolvers.set(client, (resolver = createResourceResolver()));
    await slot();
    const held = holding.get(operation.id);
    if (held) held.state = 'running';
    try {
      const result = await executeOperation(operation, {
        client,
        resolver,
        settings: options.settings,
        retries: options.retries,
        signal,
        timeoutMs,
        receivedAt,
      });
      if (!stop.signal.aborted || timedOut) finish(operation, result);
    } catch (err) {
      // a bug, not a Kubernetes answer: still end the operation with a result
      logger.error({ operationId: operation.id, err: (err as Error).message }, 'operation crashed');
      finish(
        operation,
        failureResult(
          operation,
          500,
          OutpostReason.InternalError,
          `the agent failed to run the operation: ${(err as Error).message}`,
          performance.now() - receivedAt,
        ),
      );
    } finally {
      clearTimeout(timer);
      controllers.delete(controller);
      release();
      running.delete(operation.id);
      holding.delete(operation.id);
    }
  }

  return {
    attach(fn) {
      send = fn;
      const queued = outbox.splice(0);
      if (queued.length > 0) logger.info({ results: queued.length }, 'sending results kept while disconnected');
      for (const result of queued) fn(result);
    },
    detach() {
      send = undefined;
    },
    submit(operation) {
      const receivedAt = performance.now();
      const log = logger.child({ operationId: operation.id, account: operation.account });
      if (operation.id === '') {
        log.warn('ignoring an operation without an id');
        return;
      }
      const stored = results.get(operation.id);
      if (stored) {
        log.info('operation delivered again: sending its stored result instead of running it again');
        deliver(stored);
        return;
      }
      if (running.has(operation.id)) {
        log.info('operation delivered again while still running: its result comes when it ends');
        return;
      }
      if (stop.signal.aborted) return;
      const lookup = options.account(operation.account);
      if ('notServed' in lookup) {
        finish(operation, failureResult(operation, 0, OutpostReason.AccountNotServed, lookup.notServed, performance.now() - receivedAt));
        return;
      }
      const kind = operationType(operation);
      log.debug({ type: kind }, 'operation received');
      holding.set(operation.id, { id: operation.id, account: operation.account, kind, state: 'waiting', receivedAt: Date.now() });
      running.set(operation.id, run(operation, lookup.client, receivedAt));
    },
    get active() {
      return running.size;
    },
    get pending() {
      return outbox.length;
    },
    list: () => [...holding.values()].map((op) => ({ ...op })),
    async close() {
      stop.abort();
      for (const controller of controllers) controller.abort();
      for (const resolve of waiting.splice(0)) resolve();
      await Promise.allSettled([...running.values()]);
    },
  };
}
