/**
 * Full-list bookkeeping in `watch_states`: a list START bumps the scope's generation, END prunes every row of the
 * scope the list did not see (older generation) and records the list resourceVersion as the resume point; the
 * Welcome offers the synced, recently updated scopes as resume points.
 */
import { and, eq, gt, inArray, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { objects, watchStates } from '../../db/schema.js';
import { assertLeases } from '../accounts/account-lease-queries.js';
import { bumpObjectsVersions } from '../accounts/objects-version-queries.js';
import type { WriteFence } from '../accounts/lease-fence.js';
import { invalidArgument } from '../http/errors.js';

/** One watch scope: what an agent lists and watches as a unit. */
export interface WatchScope {
  account: string;
  apiVersion: string;
  kind: string;
  /** The namespace of a per-namespace watch; empty for a cluster-wide watch. */
  watchNamespace: string;
}

/** A scope the gateway holds completely, as of `resourceVersion`. */
interface StoredResumePoint extends WatchScope {
  resourceVersion: string;
}

/** Listing progress reported by an agent. */
interface ListProgress {
  apiVersion: string;
  kind: string;
  watchNamespace: string;
  listed: number;
}

/**
 * Operations on watch_states; each call is its own transaction. With a fence, the writes happen only while the fence
 * holds the account's lease (else {@link LeaseLostError}, nothing written): a replica that lost an account cannot
 * prune its cache.
 */
export interface SyncState {
  /** Starts a full list: returns the new generation that the list's rows must carry. */
  startList(scope: WatchScope, fence?: WriteFence): Promise<number>;
  /**
   * Ends a full list started with `generation`: prunes unseen rows and marks the scope synced, atomically. `count` is
   * the number of objects the agent says the list held: when it is not the number of distinct objects the gateway
   * stored for the list, nothing is pruned or marked and it throws INVALID_ARGUMENT (a list that lost objects must
   * not prune the ones it lost).
   */
  endList(scope: WatchScope, generation: number, resourceVersion: string, count: number, fence?: WriteFence): Promise<number>;
  /** Synced scopes of these accounts updated within `maxAgeSeconds`. */
  resumePoints(accountNames: string[], maxAgeSeconds: number): Promise<StoredResumePoint[]>;
  /** Records how many objects a running list has seen so far. */
  recordProgress(account: string, progress: ListProgress[], fence?: WriteFence): Promise<void>;
}

/** Creates the watch_states operations over an open database. */
export function createSyncState(database: Database, options: { versionedKinds?: ReadonlySet<string> } = {}): SyncState {
  // A prune of a versioned kind moves the account's objects_version (ObjectWriterOptions.versionedKinds; every kind when absent).
  const { versionedKinds } = options;
  const { db } = database;
  const scopeWhere = (s: WatchScope) =>
    and(
      eq(watchStates.account, s.account),
      eq(watchStates.apiVersion, s.apiVersion),
      eq(watchStates.kind, s.kind),
      eq(watchStates.watchNamespace, s.watchNamespace),
    );
  return {
    async startList(scope, fence) {
      return db.transaction(async (tx) => {
        if (fence) await assertLeases(tx, fence);
        const rows = await tx
          .insert(watchStates)
          .values({ ...scope, syncGen: 1, synced: false, listed: 0 })
          .onConflictDoUpdate({
            target: [watchStates.account, watchStates.apiVersion, watchStates.kind, watchStates.watchNamespace],
            set: { syncGen: sql`${watchStates.syncGen} + 1`, synced: false, listed: 0, updatedAt: sql`now()` },
          })
          .returning({ syncGen: watchStates.syncGen });
        return rows[0]!.syncGen;
      });
    },

    async endList(scope, generation, resourceVersion, count, fence) {
      return db.transaction(async (tx) => {
        if (fence) await assertLeases(tx, fence);
        const [seen] = await tx
          .select({ n: sql<number>`count(*)::int` })
          .from(objects)
          .where(
            and(
              eq(objects.account, scope.account),
              eq(objects.apiVersion, scope.apiVersion),
              eq(objects.kind, scope.kind),
              eq(objects.watchNamespace, scope.watchNamespace),
              eq(objects.syncGen, generation),
            ),
          );
        if (Number(seen?.n ?? 0) !== count) {
          throw invalidArgument(
            `sync END for ${scope.account}/${scope.apiVersion}/${scope.kind}${scope.watchNamespace ? ` in ${scope.watchNamespace}` : ''} says the list held ${count} objects, but the stream sent ${Number(seen?.n ?? 0)} distinct ones since its START: nothing pruned`,
          );
        }
        const conditions = [
          eq(objects.account, scope.account),
          eq(objects.apiVersion, scope.apiVersion),
          eq(objects.kind, scope.kind),
          lt(objects.syncGen, generation),
        ];
        if (scope.watchNamespace !== '') conditions.push(eq(objects.namespace, scope.watchNamespace));
        const pruned = affectedRows(await tx.delete(objects).where(and(...conditions)));
        if (pruned > 0 && (!versionedKinds || versionedKinds.has(scope.kind))) await bumpObjectsVersions(tx, [scope.account]);
        await tx
          .update(watchStates)
          .set({ resourceVersion, synced: true, listed: Math.min(count, 2 ** 31 - 1), updatedAt: sql`now()` })
          .where(and(scopeWhere(scope), eq(watchStates.syncGen, generation)));
        return pruned;
      });
    },

    async resumePoints(accountNames, maxAgeSeconds) {
      if (accountNames.length === 0) return [];
      const rows = await db
        .select()
        .from(watchStates)
        .where(
          and(
            inArray(watchStates.account, accountNames),
            eq(watchStates.synced, true),
            gt(watchStates.updatedAt, sql`now() - make_interval(secs => ${maxAgeSeconds})`),
            sql`${watchStates.resourceVersion} <> ''`,
          ),
        );
      return rows.map((r) => ({
        account: r.account,
        apiVersion: r.apiVersion,
        kind: r.kind,
        watchNamespace: r.watchNamespace,
        resourceVersion: r.resourceVersion,
      }));
    },

    async recordProgress(account, progress, fence) {
      if (progress.length === 0) return;
      await db.transaction(async (tx) => {
        if (fence) await assertLeases(tx, fence);
        for (const p of progress) {
          await tx
            .insert(watchStates)
            .values({
              account,
              apiVersion: p.apiVersion,
              kind: p.kind,
              watchNamespace: p.watchNamespace,
              listed: Math.min(p.listed, 2 ** 31 - 1),
            })
            .onConflictDoUpdate({
              target: [watchStates.account, watchStates.apiVersion, watchStates.kind, watchStates.watchNamespace],
              set: { listed: Math.min(p.listed, 2 ** 31 - 1) },
            });
        }
      });
    },
  };
}

/** Rows affected by a statement, for either driver (postgres-js: `count`, PGlite: `affectedRows`). */
function affectedRows(result: unknown): number {
  const r = result as { count?: number; affectedRows?: number };
  return Number(r.count ?? r.affectedRows ?? 0);
}
