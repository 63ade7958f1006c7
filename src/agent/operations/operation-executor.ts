/**
 * Runs one operation against one account's cluster and turns what happened into an OperationResult: the handler for
 * its spec, the status/reason/message of the decisive Kubernetes call, the resulting objects (Secrets scrubbed once
 * more, whatever the handler did), the total and Kubernetes-only durations. An aborted signal (the operation's
 * timeout) ends it at once with reason Timeout, even if a call in flight has not noticed yet. A failure's message has
 * the request's Secret values redacted: the cluster may echo them, and the message is stored and shown in plaintext.
 */
import { create, type JsonObject } from '@bufbuild/protobuf';
import { DurationSchema, timestampFromDate, type Duration } from '@bufbuild/protobuf/wkt';
import { OperationResultSchema, RevisionSchema, type Operation, type OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { KubeClient } from '../kube/kube-client.js';
import { runApply } from './apply.js';
import { runDelete } from './delete.js';
import { createKubeCalls, type RetryPolicy } from './kube-calls.js';
import type { OperationContext, OperationSettings, Outcome } from './operation-context.js';
import { badRequest, failureOf, OperationError, OutpostReason } from './operation-error.js';
import { runPatch } from './patch.js';
import { runGet, runHistory, runList, runLogs } from './read.js';
import type { ResourceResolver } from './resource-resolver.js';
import { resultSize } from './result-size.js';
import { scrubbedObjects, withoutRequestValues } from './result-secrets.js';
import { runRollout } from './rollout.js';
import { runScale } from './scale.js';

/** Results larger than this (serialized) are replaced by a ResultTooLarge failure: the stream limit is 4 MiB. */
export const MAX_RESULT_BYTES = 3.5 * 1024 * 1024;

/** A Duration from (fractional) milliseconds, to the microsecond. */
export function durationFromMs(ms: number): Duration {
  const micros = Math.max(0, Math.round(ms * 1000));
  return create(DurationSchema, { seconds: BigInt(Math.floor(micros / 1_000_000)), nanos: (micros % 1_000_000) * 1000 });
}

/** What {@link executeOperation} needs. */
export interface ExecuteOptions {
  client: KubeClient;
  resolver: ResourceResolver;
  settings: OperationSettings;
  retries: RetryPolicy;
  /** Aborts when the operation's time is up (or the agent stops). */
  signal: AbortSignal;
  /** The timeout behind `signal`, for the message. */
  timeoutMs: number;
  /** When the agent received the operation (performance.now()), for `duration`; default now. */
  receivedAt?: number;
}

function handle(ctx: OperationContext, operation: Operation): Promise<Outcome> {
  const spec = operation.spec;
  switch (spec.case) {
    case 'apply':
      return runApply(ctx, spec.value);
    case 'delete':
      return runDelete(ctx, spec.value);
    case 'scale':
      return runScale(ctx, spec.value);
    case 'patch':
      return runPatch(ctx, spec.value);
    case 'rollout':
      return runRollout(ctx, spec.value);
    case 'get':
      return runGet(ctx, spec.value);
    case 'list':
      return runList(ctx, spec.value);
    case 'logs':
      return runLogs(ctx, spec.value);
    case 'history':
      return runHistory(ctx, spec.value);
    default:
      return Promise.reject(badRequest('the operation has no spec (apply, delete, scale, patch, rollout, get, list, logs or history)'));
  }
}

/** The operation type as logged (`apply`, `delete`…, `none`). */
export function operationType(operation: Operation): string {
  return operation.spec.case ?? 'none';
}

/** Builds a failure result for an operation that did not run (or failed before any call). */
export function failureResult(operation: Operation, statusCode: number, reason: string, message: string, durationMs = 0): OperationResult {
  return create(OperationResultSchema, {
    id: operation.id,
    account: operation.account,
    success: false,
    statusCode,
    reason,
    message,
    duration: durationFromMs(durationMs),
    kubernetesDuration: durationFromMs(0),
  });
}

/** See the module comment. Never rejects. */
export async function executeOperation(operation: Operation, options: ExecuteOptions): Promise<OperationResult> {
  const started = options.receivedAt ?? performance.now();
  const { signal } = options;
  const calls = createKubeCalls(options.client, signal, options.retries);
  const ctx: OperationContext = { calls, resolver: options.resolver, settings: options.settings };
  const timeout = () => new OperationError(504, OutpostReason.Timeout, `the operation timed out after ${options.timeoutMs} ms`);
  let outcome: Outcome;
  let onAbort: (() => void) | undefined;
  try {
    if (signal.aborted) throw timeout();
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(timeout());
      signal.addEventListener('abort', onAbort, { once: true });
    });
    outcome = await Promise.race([handle(ctx, operation), aborted]);
  } catch (err) {
    const failure = signal.aborted ? failureOf(timeout()) : failureOf(err);
    outcome = { success: false, ...failure, message: withoutRequestValues(operation, failure.message) };
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
  const durationMs = performance.now() - started;
  const result = create(OperationResultSchema, {
    id: operation.id,
    account: operation.account,
    success: outcome.success ?? true,
    statusCode: outcome.statusCode,
    reason: outcome.reason ?? '',
    message: outcome.message ?? '',
    objects: scrubbedObjects(outcome.objects),
    deleted: outcome.deleted ?? [],
    actions: outcome.actions ?? [],
    logs: outcome.logs ?? '',
    revisions: (outcome.revisions ?? []).map((r) =>
      create(RevisionSchema, {
        revision: BigInt(r.revision),
        name: r.name,
        changeCause: r.changeCause,
        createdAt: r.createdAt ? timestampFromDate(new Date(r.createdAt)) : undefined,
        template: r.template as JsonObject | undefined,
      }),
    ),
    duration: durationFromMs(durationMs),
    kubernetesDuration: durationFromMs(calls.kubernetesMs),
  });
  const size = resultSize(result);
  if (size > MAX_RESULT_BYTES) {
    return failureResult(
      operation,
      413,
      OutpostReason.ResultTooLarge,
      `the result is ${size} bytes, over the ${MAX_RESULT_BYTES} bytes a stream message may carry; narrow the request (a label selector, a limit, fewer log lines)`,
      durationMs,
    );
  }
  return result;
}
