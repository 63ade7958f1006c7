/**
 * Starts and stops the scope watchers of one account inside a session. Each account gets its own AbortController
 * (also aborted when the session ends) and a view of the session outbox that drops whatever the account still
 * produces once it is stopped, so no event of a removed account is sent after its removal is announced. Backpressure
 * is unchanged: the view waits on the same window as every other account.
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { AccountVerdict } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { AccountRuntime } from '../accounts/account-runtime.js';
import { AGENT_DEFAULTS } from '../config/defaults.js';
import { runScopeWatcher, type WatchState } from '../watch/scope-watcher.js';
import { OutboxClosedError, type Outbox } from './outbox.js';

/** An outbox view that ignores pushes, and refuses or ends waits, once `signal` aborts. */
function accountOutbox(outbox: Outbox, signal: AbortSignal): Outbox {
  return {
    pushEvent: (event) => {
      if (!signal.aborted) outbox.pushEvent(event);
    },
    pushMarker: (marker) => {
      if (!signal.aborted) outbox.pushMarker(marker);
    },
    // A stopped account must not keep waiting for the window (acks may never come): its waits end at once.
    ready: () =>
      signal.aborted
        ? Promise.reject(new OutboxClosedError())
        : new Promise<void>((resolve, reject) => {
            const onAbort = () => reject(new OutboxClosedError());
            signal.addEventListener('abort', onAbort, { once: true });
            outbox.ready().then(
              () => {
                signal.removeEventListener('abort', onAbort);
                resolve();
              },
              (err: unknown) => {
                signal.removeEventListener('abort', onAbort);
                reject(err as Error);
              },
            );
          }),
    isReady: () => !signal.aborted && outbox.isReady(),
    ack: (sequence) => outbox.ack(sequence),
    close: () => {},
    get inFlight() {
      return outbox.inFlight;
    },
    get lastSent() {
      return outbox.lastSent;
    },
    discardAccount: (account) => outbox.discardAccount(account),
  };
}

/** Options of {@link startAccountWatchers}. */
export interface StartAccountOptions {
  outbox: Outbox;
  /** The CACHING verdict, with its resume points. */
  verdict: AccountVerdict;
  logger: Logger;
  /** The session's signal: the account stops when the session ends. */
  sessionSignal: AbortSignal;
}

/**
 * Starts one watcher per allowed scope of the account (resuming where the verdict says), replacing `runtime.watches`.
 * The caller must have stopped any previous run ({@link stopAccountWatchers}).
 */
export function startAccountWatchers(runtime: AccountRuntime, options: StartAccountOptions): void {
  const name = runtime.prepared.config.name;
  const client = runtime.prepared.client;
  runtime.watches = [];
  if (client === undefined) return;
  const controller = new AbortController();
  setMaxListeners(0, controller.signal); // one listener per scope and per request
  const onSessionEnd = () => controller.abort();
  options.sessionSignal.addEventListener('abort', onSessionEnd, { once: true });
  if (options.sessionSignal.aborted) controller.abort();
  const outbox = accountOutbox(options.outbox, controller.signal);
  const startedAt = Date.now();
  const watchers = runtime.prepared.scopes.map((scope) => {
    const resume = options.verdict.resume.find(
      (r) =>
        r.apiVersion === scope.type.apiVersion &&
        r.kind === scope.type.kind &&
        r.watchNamespace === scope.namespace &&
        r.resourceVersion !== '',
    );
    const state: WatchState = {
      apiVersion: scope.type.apiVersion,
      kind: scope.type.kind,
      namespace: scope.namespace,
      state: resume ? 'watching' : 'listing',
      resourceVersion: resume?.resourceVersion ?? '',
      listed: 0,
      listInProgress: false,
      listFinished: false,
      synced: resume !== undefined,
      startedAt,
    };
    runtime.watches.push(state);
    return runScopeWatcher({
      account: name,
      client,
      scope,
      outbox,
      state,
      resumeResourceVersion: resume?.resourceVersion,
      pageSize: AGENT_DEFAULTS.listPageSize,
      backoff: AGENT_DEFAULTS.watchBackoff,
      logger: options.logger,
      signal: controller.signal,
    });
  });
  const done = Promise.allSettled(watchers).then(() => options.sessionSignal.removeEventListener('abort', onSessionEnd));
  runtime.run = { controller, done };
}

/**
 * Stops the account's watchers: synchronously (nothing more of it reaches the outbox after this call returns, and
 * what it had queued but not sent is dropped from `outbox`), then resolves when they have returned.
 */
export function stopAccountWatchers(runtime: AccountRuntime, outbox?: Outbox): Promise<void> {
  const run = runtime.run;
  runtime.run = undefined;
  run?.controller.abort();
  outbox?.discardAccount(runtime.prepared.config.name);
  return run?.done ?? Promise.resolve();
}
