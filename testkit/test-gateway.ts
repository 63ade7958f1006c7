/**
 * A gateway in the test process on a fresh test database (./databases.ts), on ephemeral ports of 127.0.0.1, insecure
 * (no authentication unless `overrides` turn it on) and silent: the one way tests start a single gateway. Suites that
 * also need a sandbox and an agent use ./stack.ts; several gateway processes, ./gateway-cluster.ts.
 */
import { sql } from 'drizzle-orm';
import {
  loadGatewayConfig,
  startGateway,
  type GatewayConfig,
  type GatewayConfigInput,
  type GatewayDeps,
  type RunningGateway,
} from '../src/gateway/index.js';
import { createSilentLogger } from '../src/shared/logger.js';
import { createTestDatabase, type TestDatabase } from './databases.js';

/** A gateway on a fresh test database. Always `close()` it (in `after`/`finally`): that also drops the database. */
export interface TestGateway {
  gateway: RunningGateway;
  testDb: TestDatabase;
  close(): Promise<void>;
  /** Runs SQL and returns plain rows (both drivers). */
  query<T = Record<string, unknown>>(text: string): Promise<T[]>;
}

/**
 * Starts a gateway with test-friendly settings on ephemeral ports (id `gw-test`); `overrides` replace whole top-level
 * config sections (a shallow merge), `deps` are handed to `startGateway` (the logger is always silent).
 */
export async function startTestGateway(
  driver: 'pglite' | 'postgres',
  overrides: GatewayConfigInput = {},
  deps: Omit<GatewayDeps, 'logger'> = {},
): Promise<TestGateway> {
  const testDb = await createTestDatabase(driver);
  const gateway = await startGateway(testGatewayConfig(testDb.url, overrides), { logger: createSilentLogger(), ...deps });
  return {
    gateway,
    testDb,
    async close() {
      await gateway.close();
      await testDb.drop();
    },
    query: (text) => queryRows(gateway.database, text),
  };
}

/**
 * The gateway config tests use: on `database`, 127.0.0.1, ephemeral ports, id `gw-test`, insecure, no environment
 * variables read; `overrides` replace whole top-level sections.
 */
export function testGatewayConfig(database: string, overrides: GatewayConfigInput = {}): GatewayConfig {
  return loadGatewayConfig({
    env: {},
    overrides: { host: '127.0.0.1', httpPort: 0, grpcPort: 0, database, id: 'gw-test', insecure: true, ...overrides },
  });
}

/** Runs raw SQL on a gateway's database and returns its rows (either driver). */
export async function queryRows<T>(database: RunningGateway['database'], text: string): Promise<T[]> {
  const result = await database.db.execute(sql.raw(text));
  const rows = (result as unknown as { rows?: T[] }).rows ?? (result as unknown as T[]);
  return Array.from(rows);
}
