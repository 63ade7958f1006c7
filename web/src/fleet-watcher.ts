import { Code, ConnectError } from '@connectrpc/connect';
import type { Api } from './api.js';
import type { AuthStore } from './auth.js';
import type { Fleet } from '../../src/gen/outpost/api/v1/fleet_service_pb.js';

/** What the WatchFleet subscription reports to the page. */
export interface FleetStatus {
  /** The latest summary; kept while reconnecting so the page does not go blank. */
  fleet: Fleet | null;
  /** True while the stream is open and has delivered its first message. */
  live: boolean;
  /** Why the stream is not live (the last failure), or null. */
  error: ConnectError | null;
  /**
   * When (ms since the epoch) a stream that had been live stopped being live; null while live and before the first
   * message. The page's data is as of then until the stream is live again.
   */
  lostAt: number | null;
}

/** Handle on a running subscription. */
export interface FleetWatcher {
  /** Ends the stream and every retry. Call it when the page or the auth version goes away. */
  stop(): void;
}

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 15_000;
/** The gateway sends at least every 15 s; silence for longer than this means a dead connection (a stuck proxy). */
const STALL_MS = 40_000;

/**
 * Opens FleetService.WatchFleet and keeps it open: after an error or an end of stream it reconnects with exponential
 * backoff (0.5 s doubling to 15 s, with jitter; reset by any message), and it reconnects when no message arrives
 * for 40 s. Unauthenticated stops it (the auth store shows the sign-in form; the caller starts a new watcher for
 * the next auth version). `onStatus` receives a fresh object on every change.
 */
export function createFleetWatcher(api: Api, auth: AuthStore, onStatus: (status: FleetStatus) => void): FleetWatcher {
  let stopped = false;
  let controller: AbortController | null = null;
  let wake: (() => void) | null = null;
  let status: FleetStatus = { fleet: null, live: false, error: null, lostAt: null };
  const emit = (next: Partial<FleetStatus>): void => {
    const lostAt = next.live === true ? null : next.live === false && status.live ? Date.now() : status.lostAt;
    status = { ...status, ...next, lostAt };
    if (!stopped) onStatus(status);
  };
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const run = async (): Promise<void> => {
    let delay = FIRST_DELAY_MS;
    while (!stopped) {
      const version = auth.state().version;
      const ctl = new AbortController();
      controller = ctl;
      let stalled = false;
      let stallTimer: ReturnType<typeof setTimeout> | undefined;
      const arm = (): void => {
        clearTimeout(stallTimer);
        stallTimer = setTimeout(() => {
          stalled = true;
          ctl.abort();
        }, STALL_MS);
      };
      try {
        arm();
        for await (const response of api.fleet.watchFleet({}, { signal: ctl.signal })) {
          arm();
          delay = FIRST_DELAY_MS;
          emit({ fleet: response.fleet ?? null, live: true, error: null });
        }
        emit({ live: false, error: new ConnectError('the server ended the stream', Code.Unavailable) });
      } catch (e) {
        if (stopped) return;
        const error = stalled ? new ConnectError(`no update for ${STALL_MS / 1000} s`, Code.DeadlineExceeded) : ConnectError.from(e);
        emit({ live: false, error });
        if (auth.report(error, version)) return;
      } finally {
        clearTimeout(stallTimer);
      }
      await sleep(delay * (0.75 + Math.random() * 0.5));
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  };

  void run();
  return {
    stop() {
      stopped = true;
      controller?.abort();
      wake?.();
    },
  };
}
