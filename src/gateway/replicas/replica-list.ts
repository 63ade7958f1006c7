/**
 * The in-memory replica list both discovery mechanisms fill: copies out on read, and change notification that
 * ignores timestamp-only updates so subscribers are not woken on every heartbeat.
 */
import type { Logger } from '../../shared/logger.js';
import type { Replica } from './replica-directory.js';

/** Shared listener bookkeeping: notifies only when the list really changed. */
export function createReplicaList() {
  let current: Replica[] = [];
  const listeners = new Set<(replicas: Replica[]) => void>();
  return {
    list: (): Replica[] => current.map((r) => ({ ...r })),
    get: (id: string): Replica | undefined => {
      const r = current.find((x) => x.id === id);
      return r ? { ...r } : undefined;
    },
    subscribe(listener: (replicas: Replica[]) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** Replaces the list; listeners run when ids, URLs or readiness changed (not for a newer timestamp alone). */
    set(next: Replica[], logger: Logger): void {
      const sorted = [...next].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const changed =
        sorted.length !== current.length ||
        sorted.some((r, i) => r.id !== current[i]!.id || r.baseUrl !== current[i]!.baseUrl || r.ready !== current[i]!.ready);
      current = sorted;
      if (!changed) return;
      const snapshot = current.map((r) => ({ ...r }));
      for (const listener of listeners) {
        try {
          listener(snapshot);
        } catch (err) {
          logger.warn({ err }, 'replica directory listener failed');
        }
      }
    },
  };
}
