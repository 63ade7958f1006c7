/**
 * Databases for tests: every DB-touching test runs once per driver. PGlite (in memory) always; Postgres when
 * OUTPOST_TEST_POSTGRES names a server URL (`.ci/run` sets it), each test in a fresh database dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

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

/**
 * Creates an empty database for the driver. PGlite databases are in-memory (`memory://`); Postgres ones are created
 * on `server` (default OUTPOST_TEST_POSTGRES; benchmarks pass their own).
 */
export async function createTestDatabase(driver: 'pglite' | 'postgres', server?: string): Promise<TestDatabase> {
  if (driver === 'pglite') return { driver, url: 'memory://', drop: async () => {} };
  const serverUrl = server ?? process.env.OUTPOST_TEST_POSTGRES;
  if (!serverUrl) throw new Error('OUTPOST_TEST_POSTGRES is not set');
  const name = `outpost_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    driver,
    url: url.toString(),
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
