/**
 * Fault injection: what tests (and `outpost sandbox fault …`) use to make the sandbox misbehave like a real API server
 * under stress — dropped watches, 410 Gone, 500s, latency, a stalled server. Every API request passes through
 * {@link FaultController.gate} before it is handled.
 */
import { ApiError, errors } from './errors.js';
import type { WatchHub } from './http/watch.js';
import type { ObjectStore } from './store.js';

/** The public fault switches (see `SandboxFaults` in index.ts). */
export interface SandboxFaults {
  /** End every open watch now (clean close of the HTTP response). */
  closeWatches(): void;
  /** The next `count` watch requests are answered with this status. */
  failNextWatches(count: number, status: 410 | 500): void;
  /** Every open watch gets an ERROR 410 event and closes; older resourceVersions now get 410. */
  expireHistory(): void;
  /** Share (0..1) of API requests answered 500. */
  setErrorRate(rate: number): void;
  /** Delay added before every API request. */
  setLatency(ms: number): void;
  /** While paused, requests wait (they do not fail) until resume. */
  pause(): void;
  resume(): void;
}

/** Faults plus the gate the server calls. */
export interface FaultController extends SandboxFaults {
  /** Waits out pause and latency, then throws the injected error for this request, if any. */
  gate(isWatch: boolean): Promise<void>;
  /** A JSON view of the current settings (for the CLI). */
  describe(): Record<string, unknown>;
  /** Releases paused requests for shutdown. */
  dispose(): void;
}

/** Creates the fault controller for a store and its watches. */
export function createFaultController(store: ObjectStore, watches: WatchHub): FaultController {
  let failWatches: { count: number; status: 410 | 500 } = { count: 0, status: 500 };
  let errorRate = 0;
  let latencyMs = 0;
  let paused = false;
  let waiters: (() => void)[] = [];

  const releaseAll = () => {
    const w = waiters;
    waiters = [];
    for (const fn of w) fn();
  };

  return {
    closeWatches: () => watches.closeAll(),
    failNextWatches(count, status) {
      if (!Number.isInteger(count) || count < 0) throw new RangeError('count must be a non-negative integer');
      if (status !== 410 && status !== 500) throw new RangeError('status must be 410 or 500');
      failWatches = { count, status };
    },
    expireHistory() {
      store.expireHistory();
      watches.expireAll();
    },
    setErrorRate(rate) {
      if (!(rate >= 0 && rate <= 1)) throw new RangeError('rate must be between 0 and 1');
      errorRate = rate;
    },
    setLatency(ms) {
      if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError('latency must be a non-negative number of milliseconds');
      latencyMs = ms;
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      releaseAll();
    },
    async gate(isWatch) {
      while (paused) await new Promise<void>((resolve) => waiters.push(resolve));
      if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
      if (isWatch && failWatches.count > 0) {
        failWatches.count--;
        if (failWatches.status === 410) throw errors.gone('too old resource version (injected fault)');
        throw new ApiError(500, 'InternalError', 'Internal error occurred: injected watch failure');
      }
      if (errorRate > 0 && Math.random() < errorRate) {
        throw new ApiError(500, 'InternalError', 'Internal error occurred: injected fault');
      }
    },
    describe: () => ({ paused, latencyMs, errorRate, failNextWatches: failWatches, openWatches: watches.openCount }),
    dispose() {
      paused = false;
      releaseAll();
    },
  };
}
