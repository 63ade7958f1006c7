/**
 * One poller per gateway for the fleet summary: while anyone watches (or asked within the last minute) it re-reads
 * the summary every interval, works out the fleet's ingest rate from the growth of the accounts' event counters,
 * and hands each watcher the summary when it changed — so a hundred open pages cost one reading a second, not a
 * hundred. Replicas never talk to each other for this: each reads the shared database, so a page sees changes
 * stored by any replica.
 */
import { equals } from '@bufbuild/protobuf';
import { FleetSchema, type Fleet } from '../../gen/outpost/api/v1/fleet_service_pb.js';
import type { Logger } from '../../shared/logger.js';
import type { FleetReading } from './fleet-snapshot.js';

/** The window the events-per-second figure is averaged over. */
const RATE_WINDOW_MS = 10_000;
/** How long the poller keeps going after the last watcher left or the last one-off read (so the rate stays warm). */
const LINGER_MS = 60_000;

/** Receives summaries, or the error that ended them (the watcher is unsubscribed then). */
interface FleetWatcher {
  next(fleet: Fleet): void;
  error(err: unknown): void;
}

/** The shared poller. */
export interface FleetMonitor {
  /** The summary now (read afresh when the last reading is older than the interval). */
  current(): Promise<Fleet>;
  /** Gets the summary as soon as it is read, then each changed one; returns the unsubscribe function. */
  watch(watcher: FleetWatcher): () => void;
  /** Stops polling and ends every watcher with `err`. */
  close(err: unknown): void;
}

/** What {@link createFleetMonitor} needs. */
export interface FleetMonitorOptions {
  read(): Promise<FleetReading>;
  intervalMs: number;
  logger: Logger;
  /** Clock, for tests. */
  now?: () => number;
}

/** Creates the poller; it starts on first use. */
export function createFleetMonitor(options: FleetMonitorOptions): FleetMonitor {
  const now = options.now ?? Date.now;
  /** Each watcher with the version of the summary it got last. */
  const watchers = new Map<FleetWatcher, number>();
  const samples: { at: number; total: number }[] = [];
  let latest: { fleet: Fleet; at: number; version: number } | undefined;
  let version = 0;
  let inFlight: Promise<Fleet> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lingerUntil = 0;
  let closed = false;

  const rate = (): number => {
    const first = samples[0];
    const last = samples[samples.length - 1];
    if (!first || !last || last.at - first.at < 1000) return 0;
    return Math.max(0, ((last.total - first.total) * 1000) / (last.at - first.at));
  };

  const deliver = () => {
    if (!latest) return;
    for (const [w, seen] of watchers) {
      if (seen === latest.version) continue;
      watchers.set(w, latest.version);
      w.next(latest.fleet);
    }
  };

  const fail = (err: unknown) => {
    options.logger.warn({ err }, 'fleet summary: reading failed');
    for (const w of [...watchers.keys()]) {
      watchers.delete(w);
      w.error(err);
    }
  };

  const poll = (): Promise<Fleet> => {
    inFlight ??= options
      .read()
      .then(({ fleet, eventsTotal }) => {
        const at = now();
        samples.push({ at, total: eventsTotal });
        while (samples.length > 2 && samples[1]!.at <= at - RATE_WINDOW_MS) samples.shift();
        fleet.eventsPerSecond = Math.round(rate() * 10) / 10;
        if (!latest || !sameContent(latest.fleet, fleet)) version++;
        latest = { fleet, at, version };
        deliver();
        return fleet;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };

  const fresh = () => latest !== undefined && now() - latest.at < options.intervalMs;

  const schedule = () => {
    if (closed || timer) return;
    if (watchers.size === 0 && now() >= lingerUntil) {
      samples.length = 0; // a gap in the readings would average over time nobody measured
      latest = undefined;
      return;
    }
    timer = setTimeout(() => {
      timer = undefined;
      poll().catch(fail).finally(schedule);
    }, options.intervalMs);
    timer.unref();
  };

  return {
    async current() {
      if (closed) throw new Error('the fleet monitor is closed');
      lingerUntil = now() + LINGER_MS;
      const fleet = fresh() ? latest!.fleet : await poll();
      schedule();
      return fleet;
    },

    watch(watcher) {
      if (closed) {
        watcher.error(new Error('the fleet monitor is closed'));
        return () => {};
      }
      watchers.set(watcher, -1);
      if (fresh()) deliver();
      else poll().catch(fail);
      schedule();
      return () => {
        if (watchers.delete(watcher) && watchers.size === 0) lingerUntil = Math.max(lingerUntil, now() + LINGER_MS);
      };
    },

    close(err) {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (const w of [...watchers.keys()]) w.error(err);
      watchers.clear();
    },
  };
}

/** Equal but for the reading time. */
function sameContent(a: Fleet, b: Fleet): boolean {
  return equals(FleetSchema, { ...a, time: undefined }, { ...b, time: undefined });
}
