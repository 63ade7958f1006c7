/**
 * The `web_sessions` rows (the only module that touches the table; docs/architecture.md, "One owner per table"): one
 * per dashboard session, keyed by the SHA-256 of its cookie's secret. Every time is passed in from the caller's clock
 * (never the database's `now()`), so sessions expire by the same clock that decides them, and tests drive it.
 * Statements take the database or the caller's transaction: a refresh locks its row for the call to the provider.
 */
import { and, eq, inArray, lt, lte, or } from 'drizzle-orm';
import type { DbOrTx } from '../../db/query-helpers.js';
import { webSessions } from '../../db/schema.js';
import type { Envelope } from '../secrets/envelope.js';

/** One session row. */
export interface WebSessionRow {
  id: string;
  provider: string;
  subject: string;
  groups: string[];
  tokens: Envelope;
  refreshAt: Date;
  createdAt: Date;
  lastUsedAt: Date;
  expiresAt: Date;
}

/** Inserts a new session. */
export async function insertWebSession(db: DbOrTx, row: WebSessionRow): Promise<void> {
  await db.insert(webSessions).values({ ...row, tokens: row.tokens as unknown as Record<string, unknown> });
}

/** The session with this id, or undefined. */
export async function readWebSession(db: DbOrTx, id: string): Promise<WebSessionRow | undefined> {
  const [row] = await db.select().from(webSessions).where(eq(webSessions.id, id));
  return row ? toRow(row) : undefined;
}

/**
 * The session with this id, locked for update until the caller's transaction ends (a refresh: one replica at a
 * time renews a session's tokens, the others wait and then read what it wrote).
 */
export async function lockWebSession(tx: DbOrTx, id: string): Promise<WebSessionRow | undefined> {
  const [row] = await tx.select().from(webSessions).where(eq(webSessions.id, id)).for('update');
  return row ? toRow(row) : undefined;
}

/** Records a use at `at`, only when the last recorded one is older than `after` (one write per minute, not per request). */
export async function touchWebSession(db: DbOrTx, id: string, at: Date, after: Date): Promise<void> {
  await db
    .update(webSessions)
    .set({ lastUsedAt: at })
    .where(and(eq(webSessions.id, id), lt(webSessions.lastUsedAt, after)));
}

/** What a refresh writes: the new tokens, the groups of the new ID token, the next refresh. */
export interface RefreshedTokens {
  tokens: Envelope;
  groups: string[];
  refreshAt: Date;
  lastUsedAt: Date;
}

/** Writes a refresh's outcome (inside the transaction that locked the row). */
export async function updateWebSessionTokens(tx: DbOrTx, id: string, refreshed: RefreshedTokens): Promise<void> {
  await tx
    .update(webSessions)
    .set({ ...refreshed, tokens: refreshed.tokens as unknown as Record<string, unknown> })
    .where(eq(webSessions.id, id));
}

/** Deletes the session; true when there was one. */
export async function deleteWebSession(db: DbOrTx, id: string): Promise<boolean> {
  const deleted = await db.delete(webSessions).where(eq(webSessions.id, id)).returning({ id: webSessions.id });
  return deleted.length > 0;
}

/**
 * Deletes at most `limit` sessions that ended: past their absolute end at `now`, or last used at or before `idleSince`.
 * One short statement per call (the purge repeats it); returns how many it deleted.
 */
export async function deleteEndedWebSessions(db: DbOrTx, now: Date, idleSince: Date, limit: number): Promise<number> {
  const ended = or(lte(webSessions.expiresAt, now), lte(webSessions.lastUsedAt, idleSince));
  const batch = db.select({ id: webSessions.id }).from(webSessions).where(ended).limit(limit);
  const deleted = await db.delete(webSessions).where(inArray(webSessions.id, batch)).returning({ id: webSessions.id });
  return deleted.length;
}

function toRow(row: typeof webSessions.$inferSelect): WebSessionRow {
  return { ...row, tokens: row.tokens as unknown as Envelope };
}
