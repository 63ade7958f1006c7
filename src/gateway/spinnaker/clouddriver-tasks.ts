/**
 * The task side of the Clouddriver API: a submission becomes a stored task (idempotent on Orca's `clientRequestId`
 * for the same caller — a retry returns the first task and runs nothing), then runs on this replica in the
 * background. Any replica answers `GET /task/{id}` from the row. A task whose replica stopped cannot finish: it is
 * failed at start-up by its own replica (same id) or, when another replica reads it and its replica is gone and its
 * row has not been touched for {@link ORPHAN_AFTER_MS}, by that reader — with a message saying its last operation may
 * or may not have been applied.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../shared/logger.js';
import { requesterOf, type SpinnakerRequestContext } from './spinnaker-headers.js';
import type { PreparedOperation, TaskRunner } from './task-runner.js';
import { TOUCH_MS } from './task-runner.js';
import type { TaskRow, TaskStore } from './task-store.js';
import { exceptionObject, ORCHESTRATION, taskView, type TaskView } from './task-view.js';

/** A running task untouched for this long, whose replica is gone, is failed by whoever reads it. */
const ORPHAN_AFTER_MS = 4 * TOUCH_MS;

/** What {@link createClouddriverTasks} needs. */
export interface ClouddriverTasksDeps {
  selfId: string;
  store: TaskStore;
  runner: TaskRunner;
  logger: Logger;
  /** True while the replica with this id is alive (this replica included). */
  replicaAlive(id: string): boolean;
}

/** One submission. */
interface Submission {
  /** Identity of the caller (`identityOf(principal)`): idempotency keys are per caller. */
  principal: string;
  clientRequestId?: string;
  operations: PreparedOperation[];
  context: SpinnakerRequestContext;
}

/** See the module comment. */
export interface ClouddriverTasks {
  /** Stores the task and starts it (unless the request id was seen); resolves once stored. `done` settles when it ended. */
  submit(submission: Submission): Promise<{ id: string; created: boolean; done: Promise<void> }>;
  /** The task as Clouddriver shows it; undefined when unknown. */
  view(id: string): Promise<TaskView | undefined>;
  /** {@link view} with the accounts the task touches, for the caller's right to read it; undefined when unknown. */
  find(id: string): Promise<{ view: TaskView; accounts: readonly string[] } | undefined>;
  /** Start-up: fails this replica's tasks left running by its previous process. Returns how many. */
  recover(): Promise<number>;
}

const LOST_MESSAGE = (replica: string) =>
  `the gateway replica running this task (${replica}) stopped before it finished; its last operation may or may not have been applied`;

/** Creates the task side. */
export function createClouddriverTasks(deps: ClouddriverTasksDeps): ClouddriverTasks {
  const { store, runner, logger } = deps;

  const failLost = async (row: TaskRow): Promise<TaskRow> => {
    const history = [...row.history, { phase: ORCHESTRATION, status: `Orchestration failed: ${LOST_MESSAGE(row.gatewayId)}` }];
    const results = [exceptionObject(row.operations[0] ?? 'unknown', LOST_MESSAGE(row.gatewayId), 'GatewayStopped'), ...row.resultObjects];
    if (await store.finish(row.id, 'FAILED', history, results))
      logger.warn({ taskId: row.id, replica: row.gatewayId }, 'failed a Spinnaker task whose replica stopped');
    return (await store.get(row.id)) ?? row;
  };

  const find = async (id: string) => {
    let row = await store.get(id);
    if (!row) return undefined;
    const untouchedFor = Date.now() - row.updatedAt.getTime();
    if (row.state === 'RUNNING' && row.gatewayId !== deps.selfId && !deps.replicaAlive(row.gatewayId) && untouchedFor > ORPHAN_AFTER_MS)
      row = await failLost(row);
    return { view: taskView(row), accounts: row.accounts };
  };

  return {
    async submit({ principal, clientRequestId, operations, context }) {
      const { row, created } = await store.create({
        id: randomUUID(),
        principal,
        clientRequestId,
        operations: operations.map((o) => o.name),
        accounts: [...new Set(operations.map((o) => o.account))],
        spinnakerUser: context.user,
        application: context.application,
        executionId: context.executionId,
        gatewayId: deps.selfId,
        history: [{ phase: ORCHESTRATION, status: 'Initializing Orchestration Task' }],
      });
      if (!created) {
        logger.info({ taskId: row.id, clientRequestId }, 'Spinnaker submission repeated: returning its task without running it again');
        return { id: row.id, created, done: Promise.resolve() };
      }
      logger.info(
        {
          taskId: row.id,
          operations: row.operations,
          accounts: row.accounts,
          user: context.user || undefined,
          executionId: context.executionId || undefined,
        },
        'Spinnaker task submitted',
      );
      return { id: row.id, created, done: runner.start(row.id, row.history, operations, requesterOf(principal, context)) };
    },
    async view(id) {
      return (await find(id))?.view;
    },
    find,
    async recover() {
      const rows = await store.runningOf(deps.selfId);
      for (const row of rows) await failLost(row);
      return rows.length;
    },
  };
}
