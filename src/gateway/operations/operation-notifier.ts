/**
 * In-process notifications of operation state changes on this replica, so waiters wake at once instead of polling
 * the database. Changes made by other replicas are not seen here: waiters also re-read the row slowly as a fallback.
 */
import type { OperationRow } from './operation-store.js';

/** Called with the row as written. */
type OperationListener = (row: OperationRow) => void;

/** Subscriptions by operation id. */
export interface OperationNotifier {
  /** Returns the unsubscribe function; call it when the waiter ends. */
  subscribe(id: string, listener: OperationListener): () => void;
  /** Tells every subscriber of `row.id`; listener errors are the listener's problem and are swallowed. */
  publish(row: OperationRow): void;
  /** Number of live subscriptions (for tests and metrics). */
  readonly size: number;
}

/** Creates an empty notifier. */
export function createOperationNotifier(): OperationNotifier {
  const listeners = new Map<string, Set<OperationListener>>();
  let size = 0;
  return {
    get size() {
      return size;
    },
    subscribe(id, listener) {
      let set = listeners.get(id);
      if (!set) listeners.set(id, (set = new Set()));
      set.add(listener);
      size++;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        size--;
        set.delete(listener);
        if (set.size === 0 && listeners.get(id) === set) listeners.delete(id);
      };
    },
    publish(row) {
      const set = listeners.get(row.id);
      if (!set) return;
      for (const l of [...set]) {
        try {
          l(row);
        } catch {
          // a listener must not break the writer
        }
      }
    },
  };
}
