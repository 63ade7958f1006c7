/**
 * Databases for tests: every DB-touching test runs once per driver. PGlite (in memory) always; Postgres when
 * OUTPOST_TEST_POSTGRES names a server URL (`.ci/run` sets it), each test in a fresh database dropped afterwards.
 *
 * A fresh Postgres database is a copy of a migrated template (`outpost_template_<hash of the migrations>`, built once
 * per server and schema by the first process that needs it, under an advisory lock): copying it costs less than
 * running the migrations in every test database (0.27 s against 0.75 s on the idle development machine, 0.5 s
 * against 1.2 s on a loaded one; the object cache's 16 partitions made the migrations dearer), as the PGlite template
 * does for in-memory databases (src/db/memory-template.ts). Templates of older schemas stay on the server until
 * dropped (they are small).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { openDatabase } from '../src/db/database.js';
import { DEFAULT_OBJECT_PARTITIONS } from '../src/db/object-partitions.js';
import { MIGRATIONS_FOLDER } from './migrations-until.js';

/** A database URL for one test, and how to remove it. */
export interface TestDatabase {
  /** `pglite` or `postgres`, for test names. */
  driver: 'pglite' | 'postgres';
  url: string;
  /** Drops the database (Postgres); call after every user closed its connections. */
  drop(): Promise<void>;
}

/** The drivers this run covers: always PGlite, Postgres too when OUTPOST_TEST_POSTGRES is set. */
export function testDrivers(): ('pglite' | 'postgres')[] {
  return process.env.OUTPOST_TEST_POSTGRES ? ['pglite', 'postgres'] : ['pglite'];
}

/** Options of {@link createTestDatabase}. */
export interface TestDatabaseOptions {
  /**
   * Postgres: an empty database, not a copy of the migrated template — for tests of the migrations themselves (another
   * partition count, an upgrade from an older schema). PGlite's `memory://` is migrated when opened either way.
   */
  empty?: boolean;
}

/**
 * Creates a database for the driver, with every migration applied (Postgres: a copy of the template; opening it
 * migrates nothing) unless `options.empty`. PGlite databases are in-memory (`memory://`); Postgres ones are created
 * on `server` (default OUTPOST_TEST_POSTGRES; benchmarks pass their own).
 */
export async function createTestDatabase(
  driver: 'pglite' | 'postgres',
  server?: string,
  options: TestDatabaseOptions = {},
): Promise<TestDatabase> {
  if (driver === 'pglite') return { driver, url: 'memory://', drop: async () => {} };
  const serverUrl = server ?? process.env.OUTPOST_TEST_POSTGRES;
  if (!serverUrl) throw new Error('OUTPOST_TEST_POSTGRES is not set');
  const template = options.empty ? undefined : await migratedTemplate(serverUrl);
  const name = `outpost_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}${template ? ` template ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(serverUrl, name);
  return {
    driver,
    url,
    drop: async () => {
      const admin2 = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        await admin2.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await admin2.end();
      }
    },
  };
}

/** The URL of database `name` on the server of `serverUrl`. */
function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Advisory lock key of the template's construction (any fixed number other than the migrator's). */
const TEMPLATE_LOCK = 0x0757_7e41;
/** The template per server, once per process. */
const templates = new Map<string, Promise<string>>();

/** The name of the migrated template on `serverUrl`, built when the server has none for these migrations. */
function migratedTemplate(serverUrl: string): Promise<string> {
  let template = templates.get(serverUrl);
  if (!template) {
    template = buildTemplate(serverUrl);
    templates.set(serverUrl, template);
    template.catch(() => templates.delete(serverUrl));
  }
  return template;
}

async function buildTemplate(serverUrl: string): Promise<string> {
  const hash = createHash('sha256').update(`partitions ${DEFAULT_OBJECT_PARTITIONS}`);
  for (const file of [
    'meta/_journal.json',
    ...readdirSync(MIGRATIONS_FOLDER)
      .filter((f) => f.endsWith('.sql'))
      .sort(),
  ]) {
    hash.update(file).update(readFileSync(join(MIGRATIONS_FOLDER, file)));
  }
  const name = `outpost_template_${hash.digest('hex').slice(0, 16)}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    // Processes starting together (test shards) build it once: the others wait here, then find it.
    await admin`select pg_advisory_lock(${TEMPLATE_LOCK})`;
    const found = await admin`select 1 from pg_database where datname = ${name}`;
    if (found.length === 0) {
      // Built under another name and renamed when complete, so a half-built template is never copied.
      const building = `${name}_building`;
      await admin.unsafe(`drop database if exists ${building} with (force)`);
      await admin.unsafe(`create database ${building}`);
      const migrated = await openDatabase(databaseUrl(serverUrl, building), { maxConnections: 1 });
      await migrated.close();
      await admin.unsafe(`alter database ${building} rename to ${name}`);
      // Nobody connects to it (autovacuum included), which CREATE DATABASE … TEMPLATE requires.
      await admin.unsafe(`alter database ${name} with is_template true allow_connections false`);
    }
    return name;
  } finally {
    await admin.end(); // ends the session, and its advisory lock
  }
}
