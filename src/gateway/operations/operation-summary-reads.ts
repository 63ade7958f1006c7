/**
 * Reads of `operations` for the fleet summary: how many are in flight and the newest ones without their bulk. They
 * live here, with the table's store (operation-store.ts), so a column change reaches only this folder
 * (docs/architecture.md, "One owner per table"). Both are cheap enough to repeat every second: a count over the
 * open states and a bounded newest-first read.
 */
import { getTableColumns, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { operations } from '../../db/schema.js';
import { OPEN_STATES } from './operation-state.js';

/** How many operations are open (not yet in a final state). */
export async function openOperationCount(db: Db): Promise<number> {
  const rows = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(operations)
    .where(inArray(operations.state, [...OPEN_STATES]));
  return Number(rows[0]?.n ?? 0);
}

/**
 * The newest `limit` operations, newest first, without their request and without the bulky parts of results
 * (objects, logs, revisions): GetOperation has them.
 */
export async function newestOperationsSlim(db: Db, limit: number) {
  return db
    .select({
      ...getTableColumns(operations),
      request: sql<Record<string, unknown>>`'{}'::jsonb`,
      result: sql<Record<string, unknown> | null>`${operations.result} - 'objects' - 'logs' - 'revisions'`,
    })
    .from(operations)
    .orderBy(sql`${operations.receivedAt} desc`, sql`${operations.id} desc`)
    .limit(limit);
}
