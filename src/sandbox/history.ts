/**
 * The watch history window: the last N committed events in resourceVersion order, kept in a ring so appending is O(1)
 * at any size. Every event has its own resourceVersion and versions are consecutive, so an event is found by
 * arithmetic. A watch that asks for a version older than the window gets 410 Gone, as from a real API server.
 */
import type { StoreEvent } from './types.js';

/** The history ring; see {@link createHistory}. */
export interface History {
  /** Appends an event; its rv must be exactly one more than the previous event's. */
  push(event: StoreEvent): void;
  /** Events with rv > `rv`, oldest first, or `undefined` when some of them were already dropped (→ 410). */
  since(rv: number): StoreEvent[] | undefined;
  /** Forgets everything up to and including `rv` (the current version): older watches must re-list. */
  expire(rv: number): void;
  /** The newest version that is no longer available; a watch may start from this or newer. */
  readonly compactedRv: number;
  readonly size: number;
}

/** Creates a ring holding at most `capacity` events (at least 1). */
export function createHistory(capacity: number, initialRv = 0): History {
  const cap = Math.max(1, Math.floor(capacity));
  const ring: (StoreEvent | undefined)[] = new Array(cap);
  let head = 0; // index of oldest
  let count = 0;
  let compactedRv = initialRv;
  let lastRv = initialRv;
  return {
    push(event) {
      if (count === cap) {
        compactedRv = ring[head]!.rv;
        ring[head] = undefined;
        head = (head + 1) % cap;
        count--;
      }
      ring[(head + count) % cap] = event;
      count++;
      lastRv = event.rv;
    },
    since(rv) {
      if (rv < compactedRv) return undefined;
      if (rv >= lastRv || count === 0) return [];
      const firstRv = ring[head]!.rv;
      const start = Math.max(0, rv + 1 - firstRv);
      const out: StoreEvent[] = [];
      for (let i = start; i < count; i++) out.push(ring[(head + i) % cap]!);
      return out;
    },
    expire(rv) {
      ring.fill(undefined);
      head = 0;
      count = 0;
      compactedRv = rv;
      lastRv = rv;
    },
    get compactedRv() {
      return compactedRv;
    },
    get size() {
      return count;
    },
  };
}
