/**
 * Finished JSON answers of the application routes Deck polls (serverGroups, loadBalancers, serverGroupManagers,
 * clusters, the application), kept while none of the accounts they were built from has changed. Deck asks the same
 * question every few seconds for every open application, and an application's answer can be a thousand server groups
 * with their pods (megabytes, tens of milliseconds of Postgres and mapping); most polls find nothing changed.
 *
 * "Changed" is `accounts.objects_version` (objects-version-queries.ts), which every writer of the object cache moves in
 * the transaction that writes objects of {@link ANSWER_KINDS}, on any replica. Every request reads the versions of its accounts first (one indexed
 * query), then serves the kept answer only when they are exactly the versions it was built under; otherwise it builds
 * the answer again — reading the objects after the versions, so the answer holds at least every change up to them —
 * and keeps it under those versions. A write the answer may have missed always moves a version past it, so the answer
 * cache never serves an answer older than what the cache held when the request began: reads stay as fresh as without
 * it. Requests that miss on the same key and versions at once share one build.
 *
 * Answers are kept by key (route, application, parameters and the exact accounts the caller may read, so callers
 * with different permissions never share an answer), least recently used first out, within `maxBytes`; 0 keeps none.
 */

import type { AnswerCacheRecorder } from '../../metrics/gateway-metrics.js';
import { LOAD_BALANCER_KINDS, MANAGER_KINDS, SECURITY_GROUP_KINDS, SERVER_GROUP_KINDS } from './object-facts.js';

/**
 * Every kind the kept answers are built from — the kinds of object-facts.ts's classes and their pods. The gateway
 * versions only these (ObjectWriterOptions.versionedKinds): Events, Leases and the other kinds clusters rewrite every
 * few seconds do not move `objects_version`, so they do not throw kept answers away.
 */
export const ANSWER_KINDS: ReadonlySet<string> = new Set([
  ...SERVER_GROUP_KINDS,
  ...MANAGER_KINDS,
  ...LOAD_BALANCER_KINDS,
  ...SECURITY_GROUP_KINDS,
  'Pod',
]);

/** See the module comment. */
export interface AnswerCache {
  /**
   * The JSON text of the answer to `key` over `accounts` (the accounts it is built from — the caller's readable
   * ones): the kept one when their versions have not moved, else `build()`'s, serialized and kept. `key` must name
   * everything else the answer depends on.
   */
  answer(key: string, accounts: readonly string[], build: () => Promise<unknown>): Promise<string>;
  /** Bytes of the answers kept (for tests and metrics). */
  readonly bytes: number;
}

/** What the cache needs. */
export interface AnswerCacheDeps {
  /** The objects version of each named account with a row (readObjectsVersions). */
  versions(accounts: readonly string[]): Promise<Map<string, number>>;
  /** Bytes of answers kept at most (UTF-16 length of their text); 0 disables the cache. */
  maxBytes: number;
  metrics?: AnswerCacheRecorder;
}

interface Entry {
  stamp: string;
  text: string;
}

/** The accounts' versions as one comparable text; an account without a row stands as `-`. */
function stampOf(accounts: readonly string[], versions: Map<string, number>): string {
  return accounts.map((a) => `${versions.get(a) ?? '-'}`).join(',');
}

/** Creates an empty cache. */
export function createAnswerCache(deps: AnswerCacheDeps): AnswerCache {
  const kept = new Map<string, Entry>();
  const building = new Map<string, Promise<string>>();
  let bytes = 0;

  const forget = (key: string) => {
    const entry = kept.get(key);
    if (!entry) return;
    kept.delete(key);
    bytes -= entry.text.length;
  };
  const keep = (key: string, entry: Entry) => {
    forget(key);
    if (entry.text.length > deps.maxBytes) return;
    kept.set(key, entry);
    bytes += entry.text.length;
    for (const oldest of kept.keys()) {
      if (bytes <= deps.maxBytes) break;
      forget(oldest);
    }
  };

  return {
    get bytes() {
      return bytes;
    },
    async answer(key, accounts, build) {
      if (deps.maxBytes <= 0) return JSON.stringify(await build());
      const sorted = [...new Set(accounts)].sort();
      const fullKey = `${key}\u0000${sorted.join('\u0000')}`;
      const stamp = stampOf(sorted, await deps.versions(sorted));
      const entry = kept.get(fullKey);
      if (entry?.stamp === stamp) {
        // Most recently used goes last.
        kept.delete(fullKey);
        kept.set(fullKey, entry);
        deps.metrics?.answerCacheLookup('hit');
        return entry.text;
      }
      deps.metrics?.answerCacheLookup('miss');
      const buildKey = `${fullKey}\u0001${stamp}`;
      let pending = building.get(buildKey);
      if (!pending) {
        pending = (async () => JSON.stringify(await build()))();
        building.set(buildKey, pending);
        pending
          .then(
            (text) => {
              // A later stamp may already be kept (a slower build of an older one finishes last): keep the newer.
              const current = kept.get(fullKey);
              if (!current || current.stamp === entry?.stamp) keep(fullKey, { stamp, text });
            },
            () => {},
          )
          .finally(() => building.delete(buildKey));
      }
      return pending;
    },
  };
}
