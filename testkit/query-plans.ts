/**
 * The plans of the statements the gateway's own code runs, for tests that check which indexes and partitions a query
 * uses. A recording copy of a database (same client, a drizzle instance with a logger) captures the SQL text and
 * parameters every statement of the code under test is sent with, so the test explains exactly what the code builds
 * instead of a copy of it that could drift. Each plan is read with EXPLAIN (ANALYZE, FORMAT JSON) in a transaction
 * that is rolled back — writes included — with sequential scans disabled there, so that the planner picks an index
 * wherever one can serve the query even on a small test table, and the executed plan shows which partitions were
 * really scanned (a partition pruned at run time shows no loops).
 */
import type { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import type { Sql } from 'postgres';
import type { Database, Db } from '../src/db/database.js';
import * as schema from '../src/db/schema.js';

/** One statement as the code sent it. */
export interface RecordedQuery {
  text: string;
  params: unknown[];
}

/** A database whose drizzle handle records every statement into `queries` (the caller clears it between steps). */
export interface RecordingDatabase {
  database: Database;
  queries: RecordedQuery[];
}

/** Wraps an open database: same client and connections, a `db` that records; never close the returned database. */
export function recordQueries(database: Database): RecordingDatabase {
  const queries: RecordedQuery[] = [];
  const logger = { logQuery: (text: string, params: unknown[]) => queries.push({ text, params: [...params] }) };
  const db =
    database.driver === 'postgres'
      ? (drizzlePostgres({ client: database.client as Sql, schema, logger }) as unknown as Db)
      : (drizzlePglite({ client: database.client as PGlite, schema, logger }) as unknown as Db);
  return { database: { ...database, db }, queries };
}

/** A node of an EXPLAIN (FORMAT JSON) plan, with the fields the tests read. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Loops'?: number;
  'Subplans Removed'?: number;
  'Conflict Arbiter Indexes'?: string[];
  Plans?: PlanNode[];
  [key: string]: unknown;
}

const ROLLBACK = Symbol('rollback');

/**
 * Executes `query` under EXPLAIN (ANALYZE, FORMAT JSON) in a transaction that is rolled back, with
 * `enable_seqscan = off` in that transaction only; resolves with the root plan node. `generic`: the plan a prepared
 * statement switches to after a few executions (postgres-js prepares every statement), planned without the parameters'
 * values — partitions can then only be pruned when the plan starts, which the executed plan shows the same way.
 */
export async function explainAnalyze(database: Database, query: RecordedQuery, options: { generic?: boolean } = {}): Promise<PlanNode> {
  const explain = 'explain (analyze, costs off, timing off, summary off, format json)';
  // EXECUTE's arguments take no parameters of their own: literals, typed by the prepared statement
  const args = query.params.map(literal).join(', ');
  const steps = options.generic
    ? {
        before: [`prepare outpost_explained as ${query.text}`, 'set local plan_cache_mode = force_generic_plan'],
        text: `${explain} execute outpost_explained${args ? `(${args})` : ''}`,
        after: ['deallocate outpost_explained'],
      }
    : { before: [], text: `${explain} ${query.text}`, after: [] };
  let result: unknown;
  if (database.driver === 'postgres') {
    await (database.client as Sql)
      .begin(async (tx) => {
        await tx.unsafe('set local enable_seqscan = off');
        for (const statement of steps.before) await tx.unsafe(statement);
        result = await tx.unsafe(steps.text, (options.generic ? [] : query.params) as never[]);
        for (const statement of steps.after) await tx.unsafe(statement);
        throw ROLLBACK;
      })
      .catch((err) => {
        if (err !== ROLLBACK) throw err;
      });
  } else {
    await (database.client as PGlite).transaction(async (tx) => {
      await tx.query('set local enable_seqscan = off');
      for (const statement of steps.before) await tx.query(statement);
      result = (await tx.query(steps.text, options.generic ? [] : query.params)).rows;
      for (const statement of steps.after) await tx.query(statement);
      await tx.rollback();
    });
  }
  const [row] = result as Record<string, unknown>[];
  const value = Object.values(row!)[0];
  const plans = (typeof value === 'string' ? JSON.parse(value) : value) as { Plan: PlanNode }[];
  return plans[0]!.Plan;
}

/** A parameter value as an SQL literal of unknown type (an array as an array literal). */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return literal(value.toISOString());
  if (Array.isArray(value)) return literal(`{${value.map((v) => `"${String(v).replace(/["\\]/g, '\\$&')}"`).join(',')}}`);
  return `'${String(value).replace(/'/g, "''")}'`;
}

/** Every node of the plan, depth first. */
export function planNodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}
