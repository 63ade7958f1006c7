/**
 * Discovery outside Kubernetes: every replica upserts its row in the `replicas` table about every
 * `heartbeatIntervalSeconds` (with `ready: false` once draining), re-reads the table on the same tick, and deletes its
 * row on graceful shutdown. A row whose heartbeat is older than `deadAfterSeconds` (by the database clock, so replica
 * clocks need not agree) is a dead replica and is not listed. A replica killed without shutdown thus disappears
 * after at most `deadAfterSeconds` plus one interval.
 */
import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { replicas } from '../../db/schema.js';
import type { Logger } from '../../shared/logger.js';
import type { ReplicaDirectory } from './replica-directory.js';
import { createReplicaList } from './replica-list.js';

/** Options of {@link createHeartbeatDirectory}. */
export interface HeartbeatDirectoryOptions {
  id: string;
  baseUrl(): string;
  isDraining(): boolean;
  database: Database;
  heartbeatIntervalSeconds: number;
  deadAfterSeconds: number;
  logger: Logger;
}

/** Creates the heartbeat-table directory. Nothing touches the database before `start()`. */
export function createHeartbeatDirectory(options: HeartbeatDirectoryOptions): ReplicaDirectory {
  const { db } = options.database;
  const list = createReplicaList();
  const intervalMs = Math.max(10, options.heartbeatIntervalSeconds * 1000);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let started = false;
  // Every database step runs on this chain, so a heartbeat never races the final delete.
  let chain: Promise<void> = Promise.resolve();
  let failing = false;
  let pendingFirst = false;

  const enqueue = (step: () => Promise<void>): Promise<void> => (chain = chain.then(step, step));

  async function beat(first: boolean): Promise<void> {
    const now = sql`now()`;
    const row = { id: options.id, baseUrl: options.baseUrl(), ready: !options.isDraining() };
    await db
      .insert(replicas)
      .values({ ...row, lastHeartbeatAt: now, startedAt: now })
      .onConflictDoUpdate({
        target: replicas.id,
        set: first ? { ...row, lastHeartbeatAt: now, startedAt: now } : { ...row, lastHeartbeatAt: now },
      });
    const rows = await db
      .select()
      .from(replicas)
      .where(sql`${replicas.lastHeartbeatAt} > now() - (${String(options.deadAfterSeconds)}::float8 * interval '1 second')`);
    list.set(
      rows.map((r) => ({ id: r.id, baseUrl: r.baseUrl, lastUpdated: r.lastHeartbeatAt, ready: r.ready })),
      options.logger,
    );
  }

  async function tick(first = false): Promise<void> {
    if (closed) return;
    if (pendingFirst) {
      first = true;
      pendingFirst = false;
    }
    try {
      await beat(first);
      if (failing) options.logger.info('replica heartbeat works again');
      failing = false;
    } catch (err) {
      // The previous list stays: a database hiccup must not make every peer look dead.
      if (!failing) options.logger.warn({ err }, 'replica heartbeat failed; keeping the last known replica list');
      failing = true;
      // A first heartbeat that failed is retried in full (started_at included) on the next tick.
      if (first) pendingFirst = true;
    }
  }

  function schedule(): void {
    if (closed) return;
    timer = setTimeout(() => {
      void enqueue(() => tick()).finally(schedule);
    }, intervalMs);
    timer.unref();
  }

  return {
    async start() {
      if (started) return;
      started = true;
      await enqueue(() => tick(true));
      schedule();
    },
    list: list.list,
    get: list.get,
    subscribe: list.subscribe,
    markDraining: () => (started ? enqueue(() => tick()) : Promise.resolve()),
    close() {
      if (closed) return chain;
      closed = true;
      clearTimeout(timer);
      if (!started) return chain;
      return enqueue(async () => {
        try {
          await db.delete(replicas).where(eq(replicas.id, options.id));
        } catch (err) {
          options.logger.warn({ err }, 'could not delete this replica from the replicas table; peers drop it once its heartbeat is old');
        }
        list.set([], options.logger);
      });
    },
  };
}
