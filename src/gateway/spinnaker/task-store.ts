/**
 * The `spinnaker_tasks` rows (the only module that touches the table). A task is inserted RUNNING by the replica that
 * received the submission, updated only by that replica while it runs, and ends SUCCEEDED or FAILED once. Orca's
 * `clientRequestId` is unique per submitting identity: a second insert with the same key returns the first task.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { spinnakerTasks } from '../../db/schema.js';

/** One stored task. */
export type TaskRow = typeof spinnakerTasks.$inferSelect;
/** A history line (`TaskDisplayStatus`). */
export interface HistoryLine {
  phase: string;
  status: string;
}
/** Where a task is. */
type TaskState = 'RUNNING' | 'SUCCEEDED' | 'FAILED';

/** What a new task holds. */
interface NewTask {
  id: string;
  principal: string;
  clientRequestId?: string;
  operations: string[];
  accounts: string[];
  spinnakerUser: string;
  application: string;
  executionId: string;
  gatewayId: string;
  history: HistoryLine[];
}

/** Database access of the Spinnaker tasks. */
export interface TaskStore {
  /**
   * Inserts a RUNNING task; with a `clientRequestId` already used by the same principal, inserts nothing and returns
   * the existing task with `created: false`.
   */
  create(task: NewTask): Promise<{ row: TaskRow; created: boolean }>;
  get(id: string): Promise<TaskRow | undefined>;
  /** Replaces the history and result objects of a running task (its runner is the only writer). */
  progress(id: string, history: HistoryLine[], resultObjects: Record<string, unknown>[]): Promise<void>;
  /** RUNNING → `state`, once; false when the task had already ended. */
  finish(
    id: string,
    state: Exclude<TaskState, 'RUNNING'>,
    history: HistoryLine[],
    resultObjects: Record<string, unknown>[],
  ): Promise<boolean>;
  /** The RUNNING tasks of a replica (start-up recovery, or a replica found dead). */
  runningOf(gatewayId: string): Promise<TaskRow[]>;
}

/** Creates the store. */
export function createTaskStore(database: Database): TaskStore {
  const { db } = database;
  const byId = async (id: string) => (await db.select().from(spinnakerTasks).where(eq(spinnakerTasks.id, id)).limit(1))[0];
  return {
    async create(task) {
      const inserted = await db
        .insert(spinnakerTasks)
        .values({ ...task, clientRequestId: task.clientRequestId ?? null, state: 'RUNNING', resultObjects: [] })
        .onConflictDoNothing()
        .returning();
      if (inserted[0]) return { row: inserted[0], created: true };
      if (task.clientRequestId !== undefined) {
        const existing = await db
          .select()
          .from(spinnakerTasks)
          .where(and(eq(spinnakerTasks.principal, task.principal), eq(spinnakerTasks.clientRequestId, task.clientRequestId)))
          .limit(1);
        if (existing[0]) return { row: existing[0], created: false };
      }
      throw new Error(`task id ${task.id} is already taken`);
    },
    get: byId,
    async progress(id, history, resultObjects) {
      await db
        .update(spinnakerTasks)
        .set({ history, resultObjects, updatedAt: sql`now()` })
        .where(and(eq(spinnakerTasks.id, id), eq(spinnakerTasks.state, 'RUNNING')));
    },
    async finish(id, state, history, resultObjects) {
      const rows = await db
        .update(spinnakerTasks)
        .set({ state, history, resultObjects, updatedAt: sql`now()`, finishedAt: sql`now()` })
        .where(and(eq(spinnakerTasks.id, id), eq(spinnakerTasks.state, 'RUNNING')))
        .returning({ id: spinnakerTasks.id });
      return rows.length > 0;
    },
    async runningOf(gatewayId) {
      return db
        .select()
        .from(spinnakerTasks)
        .where(and(eq(spinnakerTasks.state, 'RUNNING'), eq(spinnakerTasks.gatewayId, gatewayId)));
    },
  };
}
