/**
 * Which replicas hold a stream that can run an operation for an account: first the replica whose session holds the
 * account's live lease (the caching agent), then replicas with live sessions that serve it as STANDBY. Answers are
 * cached for a short time, because every forwarded operation needs one, and read again in the background when that time
 * ends (the forward does not wait for it); a caller whose forward failed calls {@link OwnerLookup.forget} so the next
 * operation reads the database again.
 */
import type { Database } from '../../db/database.js';
import { servingReplicaIds } from '../accounts/account-reads.js';
import type { ReplicaDirectory } from './replica-directory.js';

/** How long past its time a non-empty answer is still used while it is read again. */
const STALE_GRACE_MS = 10_000;

/** Replica ids able to take an operation for an account, best first. */
export interface OwnerLookup {
  /** Never includes `excludeSelf`'s own id. Empty when no live stream serves the account anywhere. */
  replicasFor(account: string): Promise<string[]>;
  /** Drops the cached answer for the account. */
  forget(account: string): void;
}

/** Options of {@link createOwnerLookup}. */
export interface OwnerLookupOptions {
  /** This replica: never returned. */
  selfId: string;
  /** How long an answer is reused. */
  cacheMs: number;
  /** Session rows untouched for this long belong to a dead replica (see agent-session-store's staleAfterSeconds). */
  staleAfterSeconds: number;
}

/** Creates the lookup over an open database. */
export function createOwnerLookup(database: Database, options: OwnerLookupOptions): OwnerLookup {
  const cache = new Map<string, { replicas: string[]; until: number; refreshing?: boolean }>();
  /** Bumped by forget: a read that started before does not bring the forgotten answer back. */
  let generation = 0;
  const read = async (account: string) => {
    const startedIn = generation;
    const replicas: string[] = [];
    for (const id of await servingReplicaIds(database.db, account, options.staleAfterSeconds)) {
      if (id && id !== options.selfId && !replicas.includes(id)) replicas.push(id);
    }
    // "Nowhere" is remembered briefly too: operations waiting for an agent ask again every 0.1 s at first (agent-wait.ts).
    if (startedIn === generation)
      cache.set(account, { replicas, until: Date.now() + (replicas.length > 0 ? options.cacheMs : Math.min(options.cacheMs, 100)) });
    return replicas;
  };
  return {
    async replicasFor(account) {
      const cached = cache.get(account);
      const now = Date.now();
      if (cached && cached.until > now) return cached.replicas;
      // A known owner a little past its time is used while it is read again in the background: the read stays off the
      // forward's path (a wrong owner answers 409 or refuses, which forgets it, and the next replica is tried).
      if (cached && cached.replicas.length > 0 && cached.until + STALE_GRACE_MS > now) {
        if (!cached.refreshing) {
          cached.refreshing = true;
          read(account).catch(() => cache.delete(account));
        }
        return cached.replicas;
      }
      return read(account);
    },
    forget(account) {
      generation++;
      cache.delete(account);
    },
  };
}

/**
 * The ready replicas whose streams serve the account, best first, as {@link OwnerLookup.replicasFor} lists them; one
 * the directory does not know ready is skipped and the cached answer forgotten. Lazy: each replica's readiness is read
 * when the caller gets to it (after its tries of the ones before).
 */
export async function* readyOwners(
  owners: OwnerLookup,
  replicas: Pick<ReplicaDirectory, 'get'>,
  account: string,
): AsyncGenerator<{ id: string; baseUrl: string }> {
  for (const id of await owners.replicasFor(account)) {
    const replica = replicas.get(id);
    if (!replica?.ready) {
      owners.forget(account);
      continue;
    }
    yield { id, baseUrl: replica.baseUrl };
  }
}
