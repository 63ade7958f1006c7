/**
 * A task as Clouddriver's `GET /task/{id}` shows it (`DefaultTask`): the current status (`completed` once finished
 * either way, `failed` implying it, `retryable` always false — Outpost never asks Orca to resume a task), every
 * history line, the operations' result objects in order and, on failure, an `EXCEPTION` summary object last.
 */
import type { HistoryLine, TaskRow } from './task-store.js';

/** The phase of the task's own lines. */
export const ORCHESTRATION = 'ORCHESTRATION';

/** Clouddriver's task status object. */
interface TaskStatusView extends HistoryLine {
  complete: boolean;
  completed: boolean;
  failed: boolean;
  retryable: boolean;
}

/** The JSON body of `GET /task/{id}`. */
export interface TaskView {
  id: string;
  status: TaskStatusView;
  history: HistoryLine[];
  resultObjects: Record<string, unknown>[];
  outputs: unknown[];
  startTimeMs: number;
  requestId: string | null;
}

/** The failure summary Orca attaches to the stage (`kato.tasks[].exception`) and Deck shows. */
export function exceptionObject(operation: string, message: string, cause = ''): Record<string, unknown> {
  return { type: 'EXCEPTION', operation, cause: cause || message, message, retryable: null, details: { errors: [message] } };
}

/** Renders a stored task. */
export function taskView(row: TaskRow): TaskView {
  const last = row.history.at(-1) ?? { phase: ORCHESTRATION, status: 'Initializing Orchestration Task' };
  const completed = row.state !== 'RUNNING';
  const failed = row.state === 'FAILED';
  return {
    id: row.id,
    status: { phase: last.phase, status: last.status, complete: completed, completed, failed, retryable: false },
    history: row.history,
    resultObjects: row.resultObjects,
    outputs: [],
    startTimeMs: row.createdAt.getTime(),
    requestId: row.clientRequestId,
  };
}
