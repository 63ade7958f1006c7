/**
 * Small helpers for queries that run on either driver (postgres-js or PGlite), shared by every repository module of
 * the gateway: the type that accepts the database or an open transaction, and the rows of a raw `db.execute` result.
 */
import type { Db } from './database.js';

/**
 * Database handle or transaction: both accept the same query builders. Repository functions take it so that callers
 * decide the transaction; a function that needs its own transaction takes a {@link Db} instead.
 */
export type DbOrTx = Pick<Db, 'select' | 'insert' | 'update' | 'delete' | 'execute'>;

/**
 * The rows of a `db.execute` result on either driver (postgres-js: an array; PGlite: `{rows}`). Column names are as
 * the SQL spelled them; values are as the driver parsed them, so callers convert (`String`, `Number`) themselves.
 */
export function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  return ((result as { rows?: Record<string, unknown>[] }).rows ?? []) as Record<string, unknown>[];
}
