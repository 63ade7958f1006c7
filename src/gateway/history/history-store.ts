/**
 * The owner of `metric_samples` and `history_writer` (docs/architecture.md, "One owner per table"): the writer's
 * lease, the samples' inserts and retention deletes, and the reads MetricsService answers from.
 */
import { and, asc, eq, gt, lt, max, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { historyWriter, metricSamples } from '../../db/schema.js';

/** One sample row as written and read. */
export type SampleRow = typeof metricSamples.$inferSelect;

/** Rows per insert statement: 12 columns each stay far below Postgres' 65,535 parameters. */
const INSERT_CHUNK = 2000;

/**
 * Takes or renews the writer's lease for `replicaId` for `leaseSeconds` (on the database's clock): true when this
 * replica holds it now — it held it already, nobody did, or the holder's lease ran out. One statement, so two
 * replicas asking at once never both get it.
 */
export async function claimHistoryWriter(db: Db, replicaId: string, leaseSeconds: number): Promise<boolean> {
  const until = sql`now() + (${leaseSeconds}::int * interval '1 second')`;
  const rows = await db
    .insert(historyWriter)
    .values({ id: 1, writer: replicaId, leaseUntil: until })
    .onConflictDoUpdate({
      target: historyWriter.id,
      set: { writer: replicaId, leaseUntil: until },
      setWhere: sql`${historyWriter.writer} = ${replicaId} or ${historyWriter.leaseUntil} <= now()`,
    })
    .returning({ writer: historyWriter.writer });
  return rows.length === 1;
}

/**
 * Ends `replicaId`'s lease (graceful shutdown), so another replica takes the writing over at its next step. Set a
 * second in the past: a claim in the same millisecond (PGlite's clock) must find it ended.
 */
export async function releaseHistoryWriter(db: Db, replicaId: string): Promise<void> {
  await db.update(historyWriter).set({ leaseUntil: sql`now() - interval '1 second'` }).where(eq(historyWriter.writer, replicaId));
}

/** Inserts sample rows; a row already written for its step (a retried step) is kept, not doubled. */
export async function insertSamples(db: Db, rows: readonly (typeof metricSamples.$inferInsert)[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db
      .insert(metricSamples)
      .values(rows.slice(i, i + INSERT_CHUNK))
      .onConflictDoNothing();
  }
}

/** Deletes the rows of `resolution` older than `before` (the writer's retention); returns how many. */
export async function deleteSamplesBefore(db: Db, resolution: number, before: Date): Promise<number> {
  const gone = await db
    .delete(metricSamples)
    .where(and(eq(metricSamples.resolution, resolution), lt(metricSamples.at, before)))
    .returning({ at: metricSamples.at });
  return gone.length;
}

/** The rows of one resolution and scope after `since`, oldest first. */
export async function readSamples(db: Db, resolution: number, scope: string, since: Date): Promise<SampleRow[]> {
  return db
    .select()
    .from(metricSamples)
    .where(and(eq(metricSamples.resolution, resolution), eq(metricSamples.scope, scope), gt(metricSamples.at, since)))
    .orderBy(asc(metricSamples.at));
}

/** When the newest fleet row of `resolution` was sampled; undefined when there is none. */
export async function newestFleetSampleAt(db: Db, resolution: number): Promise<Date | undefined> {
  const rows = await db
    .select({ at: max(metricSamples.at) })
    .from(metricSamples)
    .where(and(eq(metricSamples.resolution, resolution), eq(metricSamples.scope, '')));
  const at = rows[0]?.at;
  return at === null || at === undefined ? undefined : new Date(at);
}
