/**
 * Opens the gateway database chosen by URL and applies the migrations in `drizzle/`.
 * `postgres://…` (or `postgresql://…`) uses Postgres through postgres-js; `memory://` an in-memory PGlite;
 * anything else is a directory for an embedded PGlite.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { openMemoryPglite } from './memory-template.js';
import { DEFAULT_OBJECT_PARTITIONS, checkObjectPartitions, objectPartitionsSettingSql } from './object-partitions.js';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres, { type Sql } from 'postgres';
import * as schema from './schema.js';

/** Drizzle database over either driver; callers must only use what both drivers support. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/** An open database. `close()` must be called once, after every user of `db` has stopped. */
export interface Database {
  readonly db: Db;
  readonly driver: 'postgres' | 'pglite';
  /**
   * The driver's own client — postgres-js's `Sql` on Postgres, the `PGlite` instance otherwise — for the few hot paths
   * that bypass drizzle (raw-query.ts). Same connections as `db`; never close it directly.
   */
  readonly client: Sql | PGlite;
  /** The URL with any password removed, safe to log. */
  readonly displayUrl: string;
  close(): Promise<void>;
}

const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));
const MIGRATION_LOCK_KEY = 0x0757_9057;

/** Options for {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** Maximum Postgres connections in the pool (ignored for PGlite). */
  maxConnections?: number;
  /**
   * Hash partitions of the object cache, used only by the migration that creates them (a fresh database, or the
   * upgrade that partitions the table): object-partitions.ts. Default {@link DEFAULT_OBJECT_PARTITIONS}.
   */
  objectPartitions?: number;
}

/** True when the URL selects the Postgres driver. */
function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** Opens the database and brings its schema up to date. Throws with a clear message when it cannot. */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  const partitions = checkObjectPartitions(options.objectPartitions ?? DEFAULT_OBJECT_PARTITIONS);
  if (isPostgresUrl(url)) {
    const client = postgres(url, {
      max: options.maxConnections ?? 10,
      onnotice: () => {},
      connect_timeout: 10,
    });
    const db = drizzlePostgres({ client, schema }) as unknown as Db;
    try {
      // One dedicated connection holds an advisory lock so that replicas starting together migrate one at a time.
      const migrator = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
      try {
        await migrator`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
        const migratorDb = drizzlePostgres({ client: migrator });
        // A session setting of this connection, read by the migration that partitions the cache.
        await migratorDb.execute(objectPartitionsSettingSql(partitions));
        await migratePostgres(migratorDb, { migrationsFolder });
      } finally {
        await migrator.end({ timeout: 5 }).catch(() => {});
      }
    } catch (err) {
      await client.end({ timeout: 1 }).catch(() => {});
      throw new Error(`cannot open Postgres database ${redact(url)}: ${(err as Error).message}`, { cause: err });
    }
    return {
      db,
      driver: 'postgres',
      client,
      displayUrl: redact(url),
      close: () => client.end({ timeout: 5 }),
    };
  }
  const inMemory = url === 'memory://' || url === '';
  if (inMemory) {
    let client: PGlite;
    try {
      client = await openMemoryPglite(migrationsFolder, partitions);
    } catch (err) {
      throw new Error(`cannot open embedded database memory://: ${(err as Error).message}`, { cause: err });
    }
    return {
      db: drizzlePglite({ client, schema }) as unknown as Db,
      driver: 'pglite',
      client,
      displayUrl: 'memory://',
      close: () => client.close(),
    };
  }
  mkdirSync(url, { recursive: true });
  const client = new PGlite(url);
  try {
    await client.waitReady;
    const db = drizzlePglite({ client, schema });
    await db.execute(objectPartitionsSettingSql(partitions));
    await migratePglite(db, { migrationsFolder });
    return {
      db: db as unknown as Db,
      driver: 'pglite',
      client,
      displayUrl: url,
      close: () => client.close(),
    };
  } catch (err) {
    await client.close().catch(() => {});
    throw new Error(`cannot open embedded database ${url}: ${(err as Error).message}`, { cause: err });
  }
}

/** Runs a trivial query; used by health checks. */
export async function pingDatabase(database: Database): Promise<void> {
  await database.db.execute(sql`select 1`);
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparseable url)';
  }
}
