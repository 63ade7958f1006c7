import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { createFleetWatcher, type FleetStatus } from './fleet-watcher.js';
import type { Services } from './services.js';

/** The page-wide WatchFleet status; provided by the app root, read with useFleet(). */
export const FleetContext = createContext<FleetStatus>({ fleet: null, live: false, error: null, lostAt: null });

/**
 * Keeps one WatchFleet subscription open for the life of the page, restarting it on every sign-in and sign-out
 * (`authVersion`). The last summary survives restarts, so the page keeps showing it while reconnecting.
 * Call it once, at the root; everything else reads the result through FleetContext / useFleet().
 */
export function useFleetSubscription({ api, auth }: Services, authVersion: number): FleetStatus {
  const [status, setStatus] = useState<FleetStatus>({ fleet: null, live: false, error: null, lostAt: null });
  useEffect(() => {
    const watcher = createFleetWatcher(api, auth, (next) => setStatus((prev) => ({ ...next, fleet: next.fleet ?? prev.fleet })));
    return () => watcher.stop();
  }, [api, auth, authVersion]);
  return status;
}

/** The latest fleet summary and whether the stream is live. */
export function useFleet(): FleetStatus {
  return useContext(FleetContext);
}
