/**
 * One raw statement with `$n` parameters on either driver, for hot paths where drizzle's query building and
 * postgres-js's unnamed statements (a describe round trip before every execution) cost too much.
 */
import type { PGlite } from '@electric-sql/pglite';
import type { Sql } from 'postgres';
import type { Database } from './database.js';

/**
 * Runs `text` with `params`; resolves with the rows as the driver parsed them (column names as in SQL; on Postgres
 * timestamps come back as text — drizzle installs a pass-through parser — and jsonb as values).
 */
export type RawQuery = (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * Creates the runner over the database's own client (same pool as drizzle). On Postgres each statement is prepared
 * once per connection and then costs one round trip, so callers must use a fixed statement text and pass varying
 * data as parameters (e.g. one jsonb array): every distinct text stays prepared on every pool connection.
 */
export function createRawQuery(database: Database): RawQuery {
  const client = database.client;
  if (database.driver === 'postgres') {
    const sql = client as Sql;
    return async (text, params) => sql.unsafe(text, params as never[], { prepare: true });
  }
  const lite = client as PGlite;
  return async (text, params) => (await lite.query<Record<string, unknown>>(text, params)).rows;
}
