/**
 * How a Spinnaker task reaches a cluster: every call is an ordinary Outpost operation submitted through the
 * operations feature (stored, dispatched through the one dispatch seam — forwarded to the replica holding the
 * account's stream when needed — at most once, in the operations history), with id `<task id>-<n>`, waited for until
 * terminal. A call that did not succeed throws an {@link AgentCallError} carrying the Kubernetes status.
 */
import { create, fromJson, type JsonObject } from '@bufbuild/protobuf';
import { OperationResultSchema, type OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import { SubmitOperationRequestSchema, type SubmitOperationRequest } from '../../gen/outpost/api/v1/operation_service_pb.js';
import type { OperationManager } from '../operations/operation-manager.js';
import type { OperationRow } from '../operations/operation-store.js';
import { msToDuration } from '../../shared/durations.js';

/** The operation spec of a call (one case of `SubmitOperationRequest.spec`). */
export type CallSpec = SubmitOperationRequest['spec'];

/** A call that ended without success: the agent's result (Kubernetes status code and message) or the gateway's error. */
export class AgentCallError extends Error {
  constructor(
    message: string,
    /** The Kubernetes HTTP status of the failure (404 not found, 409 conflict…); 0 when the agent was not reached. */
    readonly statusCode: number,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'AgentCallError';
  }
}

/** A successful call's result, with the objects as plain JSON. */
export interface CallResult {
  operationId: string;
  result: OperationResult;
  objects: Record<string, unknown>[];
}

/** Sends operations for one task. */
export interface AgentCalls {
  /** Submits and waits; throws {@link AgentCallError} unless the operation SUCCEEDED. */
  run(account: string, spec: CallSpec, timeoutMs?: number): Promise<CallResult>;
}

/** Default time one call may take (a deploy of many objects included). */
const CALL_TIMEOUT_MS = 120_000;

/**
 * Creates the calls of task `taskId`; ids are `<taskId>-1`, `<taskId>-2`… in call order. `requestedBy` is recorded on
 * every operation (the caller's identity and the Spinnaker user).
 */
export function createAgentCalls(
  operations: Pick<OperationManager, 'submit'>,
  taskId: string,
  signal?: AbortSignal,
  requestedBy = '',
): AgentCalls {
  let n = 0;
  return {
    async run(account, spec, timeoutMs = CALL_TIMEOUT_MS) {
      const id = `${taskId}-${++n}`;
      const request = create(SubmitOperationRequestSchema, { account, id, wait: true, timeout: msToDuration(timeoutMs), spec });
      return callResultOf(await operations.submit(request, signal, requestedBy));
    },
  };
}

/** The outcome of a call whose operation (or read) ended as `row`: its result, or an {@link AgentCallError}. */
export function callResultOf(row: Pick<OperationRow, 'id' | 'state' | 'result' | 'error'>): CallResult {
  const { id } = row;
  const result = row.result ? fromJson(OperationResultSchema, row.result as JsonObject, { ignoreUnknownFields: true }) : undefined;
  if (row.state === 'SUCCEEDED' && result) return { operationId: id, result, objects: result.objects as Record<string, unknown>[] };
  if (result && !result.success)
    throw new AgentCallError(result.message || result.reason || 'the operation failed', result.statusCode, result.reason);
  if (row.state === 'TIMED_OUT') throw new AgentCallError(row.error || `operation ${id} timed out`, 0, 'Timeout');
  throw new AgentCallError(row.error || `operation ${id} ended ${row.state}`, 0, row.state);
}
