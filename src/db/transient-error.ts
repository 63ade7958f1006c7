/**
 * Which database errors mean "the statement was rolled back because of other transactions; running it again may
 * succeed": deadlocks and serialization failures (SQLSTATE 40P01, 40001), on either driver. Callers retry only
 * statements that are safe to repeat.
 */

const CONFLICT_CODES = new Set(['40P01', '40001']);

/** True for a deadlock or serialization failure reported by Postgres or PGlite. */
export function isTransactionConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONFLICT_CODES.has(code);
}
