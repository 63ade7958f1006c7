/**
 * Runs a submitted Clouddriver task on this replica: the prepared operations one after another (as Clouddriver's
 * orchestration processor does), each reaching the cluster through {@link AgentCalls}; progress lines and result
 * objects are written to the task row as they happen so every replica can serve `GET /task/{id}`. A failing
 * operation records `Orchestration failed: …` and an EXCEPTION summary, and the task ends FAILED — never retryable.
 * While a task runs its row is touched every {@link TOUCH_MS}, so a task whose replica died can be told from a slow one.
 */
import type { Logger } from '../../shared/logger.js';
import { AgentCallError, type AgentCalls } from './agent-calls.js';
import type { HistoryLine, TaskStore } from './task-store.js';
import { exceptionObject, ORCHESTRATION } from './task-view.js';

/** What an operation sees while it runs. */
export interface TaskContext {
  readonly taskId: string;
  readonly calls: AgentCalls;
  /** Appends a history line (Deck shows the latest as progress). */
  status(phase: string, line: string): void;
  /** Ends when the gateway shuts down. */
  readonly signal: AbortSignal;
}

/** One validated description, ready to run. */
export interface PreparedOperation {
  /** Orca's name (`deployManifest`). */
  name: string;
  /** Clouddriver's operation class, named in failure lines and summaries (`KubernetesDeployManifestOperation`). */
  operationClass: string;
  account: string;
  /** Runs it; the returned object (if any) becomes a result object. Throws to fail the task. */
  run(context: TaskContext): Promise<Record<string, unknown> | undefined>;
}

/** A failure an operation reports in its own words (Clouddriver's messages), with the cause's class-like name. */
export class TaskFailure extends Error {
  constructor(
    message: string,
    readonly cause_ = 'KubernetesOperationException',
  ) {
    super(message);
    this.name = 'TaskFailure';
  }
}

/** How often a running task's row is touched. */
export const TOUCH_MS = 10_000;

/** What the runner needs. */
export interface TaskRunnerDeps {
  store: TaskStore;
  logger: Logger;
  /** The calls of a task (fresh numbering per task), recording `requestedBy` on each operation. */
  callsFor(taskId: string, signal: AbortSignal, requestedBy: string): AgentCalls;
  /** How often a running task's row is touched; default {@link TOUCH_MS}. */
  touchMs?: number;
}

/** Runs tasks in the background; `close()` stops them (they end FAILED with a clear line when the gateway stops). */
export interface TaskRunner {
  /** Starts running; resolves when the task ended (tests await it; routes do not). */
  start(taskId: string, history: HistoryLine[], operations: PreparedOperation[], requestedBy: string): Promise<void>;
  close(): Promise<void>;
}

/** Creates the runner. */
export function createTaskRunner(deps: TaskRunnerDeps): TaskRunner {
  const { store, logger } = deps;
  const running = new Set<Promise<void>>();
  const stop = new AbortController();

  async function execute(taskId: string, initial: HistoryLine[], operations: PreparedOperation[], requestedBy: string): Promise<void> {
    const history = [...initial];
    const results: Record<string, unknown>[] = [];
    let failed = false;
    let writes = Promise.resolve();
    const save = () => {
      const snapshot = [...history];
      const objects = [...results];
      writes = writes
        .then(() => store.progress(taskId, snapshot, objects))
        .catch((err) => logger.warn({ err, taskId }, 'could not record task progress'));
    };
    const touch = setInterval(save, deps.touchMs ?? TOUCH_MS);
    touch.unref();
    const context: TaskContext = {
      taskId,
      calls: deps.callsFor(taskId, stop.signal, requestedBy),
      signal: stop.signal,
      status(phase, line) {
        history.push({ phase, status: line });
        save();
      },
    };
    try {
      for (const op of operations) {
        context.status(ORCHESTRATION, `Processing op: ${op.operationClass}`);
        try {
          const result = await op.run(context);
          if (result) results.push(result);
        } catch (err) {
          failed = true;
          const message = failureMessage(err, stop.signal.aborted);
          const cause = err instanceof TaskFailure ? err.cause_ : err instanceof AgentCallError ? 'KubernetesApiException' : 'Exception';
          if (!(err instanceof TaskFailure) && !(err instanceof AgentCallError))
            logger.error({ err, taskId, operation: op.name }, 'Spinnaker operation failed unexpectedly');
          history.push({ phase: ORCHESTRATION, status: `Orchestration failed: ${op.operationClass} | ${cause}: [${message}]` });
          results.unshift(exceptionObject(op.operationClass, message, cause));
          break;
        }
      }
      if (!failed) history.push({ phase: ORCHESTRATION, status: 'Orchestration completed.' });
    } finally {
      clearInterval(touch);
      await writes;
      await store
        .finish(taskId, failed ? 'FAILED' : 'SUCCEEDED', history, results)
        .catch((err) => logger.error({ err, taskId }, 'could not record the end of a task'));
      logger.info({ taskId, failed, operations: operations.map((o) => o.name) }, 'Spinnaker task finished');
    }
  }

  return {
    start(taskId, history, operations, requestedBy) {
      const done = execute(taskId, history, operations, requestedBy);
      running.add(done);
      done.finally(() => running.delete(done)).catch(() => {});
      return done;
    },
    async close() {
      stop.abort();
      await Promise.allSettled([...running]);
    },
  };
}

function failureMessage(err: unknown, stopping: boolean): string {
  if (stopping) return 'the gateway shut down while the task ran; its last operation may or may not have been applied';
  if (err instanceof Error) return err.message;
  return String(err);
}
