/**
 * The number of hash partitions of the object cache (`objects`, partitioned by account since migration 0016). It is
 * chosen once, when the migration that creates the partitioned table runs — a fresh install, or the upgrade that
 * converts the table — from the session setting `outpost.object_partitions`, which the migrators set from
 * `cache.objectPartitions` before migrating. Changing the configuration afterwards changes nothing: the table keeps
 * the partitions it was created with (the gateway logs a warning when they differ; docs/operating.md says how to
 * repartition). Why 16 by default: docs/scaling.md, "The object cache's partitions".
 */
import { type SQL, sql } from 'drizzle-orm';
import { rowsOf } from './query-helpers.js';

/** Partitions when nothing says otherwise; migration 0016 uses the same number when the setting is unset. */
export const DEFAULT_OBJECT_PARTITIONS = 16;
/** The range the configuration and the migration accept. */
export const MIN_OBJECT_PARTITIONS = 1;
export const MAX_OBJECT_PARTITIONS = 1024;

/** The session setting migration 0016 reads (`current_setting('outpost.object_partitions', true)`). */
const OBJECT_PARTITIONS_SETTING = 'outpost.object_partitions';

/** Throws a clear error unless `count` is a whole number in the accepted range. */
export function checkObjectPartitions(count: number): number {
  if (!Number.isInteger(count) || count < MIN_OBJECT_PARTITIONS || count > MAX_OBJECT_PARTITIONS) {
    throw new Error(
      `the object cache's partition count must be a whole number from ${MIN_OBJECT_PARTITIONS} to ${MAX_OBJECT_PARTITIONS}, not ${count}`,
    );
  }
  return count;
}

/**
 * The statement that sets the partition count for the migrations run next on the same connection (session scope:
 * drizzle's migrator runs them in its own transaction afterwards).
 */
export function objectPartitionsSettingSql(count: number): SQL {
  return sql`select set_config(${OBJECT_PARTITIONS_SETTING}, ${String(checkObjectPartitions(count))}, false)`;
}

/** Something that runs a drizzle SQL statement: either driver's database. */
interface Executor {
  execute(query: SQL): Promise<unknown>;
}

/**
 * How many partitions `objects` has in this database (0 when it is not partitioned: a database migrated by an older
 * version, not yet upgraded).
 */
export async function countObjectPartitions(db: Executor): Promise<number> {
  const rows = rowsOf(await db.execute(sql`select count(*)::int as n from pg_inherits where inhparent = to_regclass('objects')`));
  return Number(rows[0]?.n ?? 0);
}
