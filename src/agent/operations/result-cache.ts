/**
 * The results of recent operations by id (bounded in count and age): what makes a redelivered operation return its
 * result instead of running again. Oldest entries go first when it is full.
 */
import type { OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';

/** See the module comment. */
export interface ResultCache {
  get(id: string): OperationResult | undefined;
  set(id: string, result: OperationResult): void;
  readonly size: number;
}

/** Creates a cache keeping at most `maxEntries` results for at most `ttlMs`. `now` is injectable for tests. */
export function createResultCache(maxEntries: number, ttlMs: number, now: () => number = Date.now): ResultCache {
  const entries = new Map<string, { result: OperationResult; storedAt: number }>();

  function prune(): void {
    const cutoff = now() - ttlMs;
    for (const [id, entry] of entries) {
      if (entry.storedAt > cutoff && entries.size <= maxEntries) break;
      entries.delete(id);
    }
  }

  return {
    get(id) {
      const entry = entries.get(id);
      if (entry === undefined) return undefined;
      if (entry.storedAt <= now() - ttlMs) {
        entries.delete(id);
        return undefined;
      }
      return entry.result;
    },
    set(id, result) {
      entries.delete(id);
      entries.set(id, { result, storedAt: now() });
      prune();
    },
    get size() {
      return entries.size;
    },
  };
}
