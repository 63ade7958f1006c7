/**
 * The `operations` rows. Few writes per operation: one insert (PENDING), one update when it is sent, one conditional
 * update to a terminal state — `where state in (PENDING, SENT)`, so whichever writer comes first (result, deadline
 * timer, sweeper, another replica) records the outcome exactly once and the others change nothing.
 *
 * This file and operation-queries.ts (its raw SQL statements) are the one owner of the `operations` table: every
 * insert, update and delete of its rows is written there (test/docs/table-owners.test.ts checks it), so the
 * rule above is kept in one place (docs/architecture.md, rule 6).
 */
import { and, count, desc, eq, inArray, lte, sql, type SQL } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import type { Database } from '../../db/database.js';
import { operations } from '../../db/schema.js';
import { accountExists } from '../accounts/account-reads.js';
import { createOperationQueries } from './operation-queries.js';
import { OPEN_STATES, type StoredState } from './operation-state.js';

/** One stored operation. */
export type OperationRow = typeof operations.$inferSelect;
/** What {@link OperationStore.insert} writes. */
export type NewOperationRow = typeof operations.$inferInsert;

/** Keyset position in newest-first order. */
export interface ListPosition {
  receivedAt: Date;
  id: string;
}

/** A terminal outcome. */
export interface Outcome {
  state: Extract<StoredState, 'SUCCEEDED' | 'FAILED'>;
  result?: Record<string, unknown>;
  error?: string;
  at: Date;
  /** Agent that produced the result (recorded on the row). */
  agentId?: string;
  /** Session that carried it (recorded on the row when the SENT update was merged into this one). */
  sessionId?: string;
  /** The first send, when only memory knows it yet (the SENT update may still be in flight). */
  sentAt?: Date;
}

/** One agent result for {@link OperationStore.finishMany}. */
export interface ResultItem {
  id: string;
  account: string;
  outcome: Outcome;
  /** The recording replica sent the operation on `outcome.sessionId` itself (its SENT mark may not be written yet). */
  vouched?: boolean;
}

/** Where an operation was sent. */
export interface SentTarget {
  agentId: string;
  sessionId: string;
  sentAt: Date;
}

/** Database access of the operations feature. */
export interface OperationStore {
  accountExists(name: string): Promise<boolean>;
  /** Inserts the row; undefined when the id is already taken (the caller reads the existing row). */
  insert(row: NewOperationRow): Promise<OperationRow | undefined>;
  /**
   * Inserts many rows in one statement (one commit); per row, in order, true when inserted, false when its id was
   * already taken. All or nothing: on error no row was inserted.
   */
  insertMany(rows: NewOperationRow[]): Promise<boolean[]>;
  get(id: string): Promise<OperationRow | undefined>;
  /** PENDING/SENT → SENT with the target; keeps the first sent_at. Undefined when the operation is already terminal. */
  markSent(id: string, target: SentTarget): Promise<OperationRow | undefined>;
  /** {@link markSent} for many operations in one statement; per item, in order, whether it changed a row. */
  markSentMany(items: ({ id: string } & SentTarget)[]): Promise<boolean[]>;
  /**
   * Records a terminal outcome if the operation is still open (and, when given, only from `onlyStates`, only for
   * `accountIn`). Undefined when nothing changed.
   */
  finish(id: string, outcome: Outcome, opts?: { onlyStates?: StoredState[]; accountIn?: string[] }): Promise<OperationRow | undefined>;
  /**
   * Agent results of many operations in one statement: each recorded only if its operation is still open, of
   * `account`, and — when the outcome names a session — sent on that session (the row's `session_id`, which a
   * resumption re-points), or not marked sent yet while the caller's memory `vouched` for that session. Per item, in
   * order, the terminal row, or undefined when nothing changed.
   */
  finishMany(items: ResultItem[]): Promise<(OperationRow | undefined)[]>;
  /**
   * A session resumed `from` with its token: its open operations now belong to session `to` (which alone may answer
   * them from now on). Returns the ids of the rows that moved.
   */
  repointSession(from: string, to: string): Promise<string[]>;
  /**
   * Open operations past their deadline → TIMED_OUT (at most `limit`, or only `ids`), with an error saying how long
   * and whether they had been sent — or `error` when given. `gatewayId` restricts to rows this replica received.
   */
  expire(now: Date, opts?: { ids?: string[]; gatewayId?: string; error?: string; limit?: number }): Promise<OperationRow[]>;
  /** Open operations of the accounts still within their deadline, oldest first. */
  openFor(accountNames: string[], now: Date): Promise<OperationRow[]>;
  /** Newest first after `after`, `limit` rows, optional filters. */
  list(filter: { account?: string; state?: StoredState }, limit: number, after?: ListPosition): Promise<OperationRow[]>;
  /** Newest first by offset (REST), plus the total count. */
  page(offset: number, limit: number): Promise<{ rows: OperationRow[]; total: number }>;
}

/** Creates the store over an open database. */
export function createOperationStore(database: Database): OperationStore {
  const { db } = database;
  const queries = createOperationQueries(database);
  const open = inArray(operations.state, [...OPEN_STATES]);
  const timeoutText = sql`case when ${operations.timeoutMs} % 1000 = 0 then (${operations.timeoutMs} / 1000)::text || 's' else ${operations.timeoutMs}::text || 'ms' end`;
  const timedOutError = sql`case when ${operations.sentAt} is null
      then 'operation timed out after ' || ${timeoutText} || ' before it was sent to an agent'
      else 'operation timed out after ' || ${timeoutText} || ' waiting for the result from agent ' || ${operations.agentId} end`;

  return {
    accountExists: (name) => accountExists(db, name),

    async insert(row) {
      const rows = await db.insert(operations).values(row).onConflictDoNothing({ target: operations.id }).returning();
      return rows[0];
    },

    insertMany: queries.insertMany,

    async get(id) {
      const rows = await db.select().from(operations).where(eq(operations.id, id)).limit(1);
      return rows[0];
    },

    async markSent(id, target) {
      const rows = await db
        .update(operations)
        .set({
          state: 'SENT',
          sentAt: sql`coalesce(${operations.sentAt}, ${target.sentAt.toISOString()}::timestamptz)`,
          agentId: target.agentId,
          sessionId: target.sessionId,
        })
        .where(and(eq(operations.id, id), open))
        .returning();
      return rows[0];
    },

    markSentMany: queries.markSentMany,

    finishMany: queries.finishMany,

    async repointSession(from, to) {
      if (!from || !to || from === to) return [];
      const rows = await db
        .update(operations)
        .set({ sessionId: to })
        .where(and(eq(operations.sessionId, from), open))
        .returning({ id: operations.id });
      return rows.map((r) => r.id);
    },

    async finish(id, outcome, opts = {}) {
      const conditions: SQL[] = [eq(operations.id, id), inArray(operations.state, opts.onlyStates ?? [...OPEN_STATES])];
      if (opts.accountIn) conditions.push(inArray(operations.account, opts.accountIn.length > 0 ? opts.accountIn : ['']));
      const set: PgUpdateSetSource<typeof operations> = {
        state: outcome.state,
        error: outcome.error ?? '',
        finishedAt: outcome.at,
      };
      if (outcome.result) {
        set.result = outcome.result;
        set.resultAt = outcome.at;
      }
      if (outcome.agentId) set.agentId = outcome.agentId;
      if (outcome.sessionId) set.sessionId = outcome.sessionId;
      if (outcome.sentAt) set.sentAt = sql`coalesce(${operations.sentAt}, ${outcome.sentAt.toISOString()}::timestamptz)`;
      const rows = await db
        .update(operations)
        .set(set)
        .where(and(...conditions))
        .returning();
      return rows[0];
    },

    async expire(now, opts = {}) {
      const due: SQL[] = [open, lte(operations.deadlineAt, now)];
      if (opts.gatewayId !== undefined) due.push(eq(operations.gatewayId, opts.gatewayId));
      const target = opts.ids
        ? and(inArray(operations.id, opts.ids.length > 0 ? opts.ids : ['']), ...due)
        : inArray(
            operations.id,
            // Rows another statement holds are skipped (they are being finished); the rest are locked in id order.
            db
              .select({ id: operations.id })
              .from(operations)
              .where(and(...due))
              .orderBy(operations.id)
              .limit(opts.limit ?? 1000)
              .for('update', { skipLocked: true }),
          );
      return db
        .update(operations)
        .set({ state: 'TIMED_OUT', error: opts.error ?? timedOutError, finishedAt: now })
        .where(and(target, ...due))
        .returning();
    },

    async openFor(accountNames, now) {
      if (accountNames.length === 0) return [];
      return db
        .select()
        .from(operations)
        .where(and(inArray(operations.account, accountNames), open, sql`${operations.deadlineAt} > ${now.toISOString()}::timestamptz`))
        .orderBy(operations.receivedAt);
    },

    async list(filter, limit, after) {
      const conditions: SQL[] = [];
      if (filter.account) conditions.push(eq(operations.account, filter.account));
      if (filter.state) conditions.push(eq(operations.state, filter.state));
      if (after) {
        conditions.push(sql`(${operations.receivedAt}, ${operations.id}) < (${after.receivedAt.toISOString()}::timestamptz, ${after.id})`);
      }
      return db
        .select()
        .from(operations)
        .where(and(...conditions))
        .orderBy(desc(operations.receivedAt), desc(operations.id))
        .limit(limit);
    },

    async page(offset, limit) {
      const [rows, totals] = await Promise.all([
        db.select().from(operations).orderBy(desc(operations.receivedAt), desc(operations.id)).limit(limit).offset(offset),
        db.select({ n: count() }).from(operations),
      ]);
      return { rows, total: Number(totals[0]?.n ?? 0) };
    },
  };
}
