/**
 * What an operation result must hold, per operation type (proto/outpost/agent/v1/operation.proto, OperationResult;
 * docs/agent-protocol.md, "Results"). Agents other than Outpost's own exist, so the gateway checks every result
 * before it records it: a result that breaks these rules is recorded FAILED with reason `InvalidResult` (the
 * operation may still have been applied in the cluster), never stored as the agent sent it.
 *
 * Success:
 * - apply: `objects` holds one object per applied manifest (at least one), each with apiVersion, kind and
 *   metadata.name; `actions` is empty (an older agent) or holds one word of APPLY_ACTIONS per object, in order.
 * - delete: `deleted` names what was deleted as `Kind/namespace/name` (or `Kind/name`): exactly the one object of a
 *   delete by name, any number for a label selector.
 * - scale: `objects` holds exactly the `autoscaling/v1` `Scale` of the target, as the scale subresource returned it.
 * - patch, rollout, get: `objects` holds exactly the target object after the call.
 * - list: `objects` holds the items (with apiVersion and kind), no more than `limit` when one was given.
 * - logs: `logs` holds the text (possibly empty).
 * - history: `revisions` holds the revisions, oldest first, numbered 1 or more and strictly increasing.
 * Every field not named for the type is empty. Failure: `reason` is set; only a failed apply may carry `objects`
 * (those applied before the failure) and their `actions`. A non-empty `account` must be the operation's.
 */
import { create, type JsonObject } from '@bufbuild/protobuf';
import { OperationResultSchema, type OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import { APPLY_ACTIONS, isApplyAction } from '../../shared/apply-actions.js';

/** The reason an invalid result is recorded under. */
export const INVALID_RESULT_REASON = 'InvalidResult';

type Spec = Record<string, unknown>;

/** Why `result` breaks the rules for an operation of `type` with `request` (its protobuf JSON) on `account`; undefined when it follows them. */
export function resultShapeProblem(
  type: string,
  request: Record<string, unknown> | undefined,
  account: string,
  result: OperationResult,
): string | undefined {
  if (result.account !== '' && result.account !== account)
    return `the result names account ${JSON.stringify(result.account)}, but the operation is for ${JSON.stringify(account)}`;
  const spec = (request?.[type] ?? {}) as Spec;
  if (!result.success) return failureProblem(type, result);
  return successProblem(type, spec, result);
}

function failureProblem(type: string, r: OperationResult): string | undefined {
  if (r.reason === '') return 'a failed result must give a reason';
  if (r.objects.length > 0 && type !== 'apply')
    return `a failed ${type} result carries no objects (only a failed apply lists what it applied before failing)`;
  return objectsProblem(r.objects) ?? actionsProblem(r) ?? onlyFields(type, r, ['objects', 'actions']);
}

function successProblem(type: string, spec: Spec, r: OperationResult): string | undefined {
  const name = typeof spec.name === 'string' ? spec.name : '';
  switch (type) {
    case 'apply':
      if (r.objects.length === 0) return 'a successful apply returns the applied objects (at least one)';
      return objectsProblem(r.objects) ?? actionsProblem(r) ?? onlyFields(type, r, ['objects', 'actions']);
    case 'delete': {
      const bad = r.deleted.find((ref) => !/^[^/\s]+\/(?:[^/\s]+\/)?[^/\s]+$/.test(ref));
      if (bad !== undefined) return `deleted entry ${JSON.stringify(bad)} is not Kind/namespace/name or Kind/name`;
      if (name !== '' && (r.deleted.length !== 1 || !r.deleted[0]!.endsWith(`/${name}`)))
        return `a delete by name returns exactly that object in deleted (${JSON.stringify(name)}), got ${JSON.stringify(r.deleted)}`;
      return onlyFields(type, r, ['deleted']);
    }
    case 'scale':
      return (
        targetProblem(type, r, name) ??
        (r.objects[0]!.kind !== 'Scale' || r.objects[0]!.apiVersion !== 'autoscaling/v1'
          ? `a scale returns the autoscaling/v1 Scale of the target, not ${String(r.objects[0]!.apiVersion)} ${String(r.objects[0]!.kind)}`
          : undefined)
      );
    case 'patch':
    case 'rollout':
    case 'get':
      return targetProblem(type, r, name);
    case 'list': {
      const limit = Number(spec.limit ?? 0);
      if (limit > 0 && r.objects.length > limit) return `a list with limit ${limit} returned ${r.objects.length} objects`;
      return objectsProblem(r.objects) ?? onlyFields(type, r, ['objects']);
    }
    case 'logs':
      return onlyFields(type, r, ['logs']);
    case 'history': {
      let previous = 0n;
      for (const rev of r.revisions) {
        if (rev.revision <= previous)
          return `history revisions must be numbered 1 or more, oldest first, strictly increasing (got ${rev.revision} after ${previous})`;
        previous = rev.revision;
      }
      return onlyFields(type, r, ['revisions']);
    }
    default:
      return undefined;
  }
}

/** Exactly one object, the target (its metadata.name), and nothing else. */
function targetProblem(type: string, r: OperationResult, name: string): string | undefined {
  if (r.objects.length !== 1) return `a successful ${type} returns exactly one object (the target), got ${r.objects.length}`;
  const problem = objectsProblem(r.objects);
  if (problem) return problem;
  const got = (r.objects[0]!.metadata as JsonObject).name;
  if (name !== '' && got !== name) return `a ${type} of ${JSON.stringify(name)} returned object ${JSON.stringify(got)}`;
  return onlyFields(type, r, ['objects']);
}

/** Every object names its apiVersion, kind and metadata.name. */
function objectsProblem(objects: JsonObject[]): string | undefined {
  for (const [i, o] of objects.entries()) {
    const meta = o.metadata;
    if (typeof o.apiVersion !== 'string' || o.apiVersion === '' || typeof o.kind !== 'string' || o.kind === '')
      return `object ${i} has no apiVersion or kind`;
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta) || typeof meta.name !== 'string' || meta.name === '')
      return `object ${i} has no metadata.name`;
  }
  return undefined;
}

/** An apply's `actions`: none at all, or one known word per object. */
function actionsProblem(r: OperationResult): string | undefined {
  if (r.actions.length === 0) return undefined;
  if (r.actions.length !== r.objects.length)
    return `an apply names one action per object: ${r.objects.length} objects, ${r.actions.length} actions`;
  const bad = r.actions.find((a) => !isApplyAction(a));
  return bad === undefined ? undefined : `apply action ${JSON.stringify(bad)} is not one of ${APPLY_ACTIONS.join(', ')}`;
}

type PayloadField = 'objects' | 'deleted' | 'logs' | 'revisions' | 'actions';

/** The payload fields other than `allowed` are empty. */
function onlyFields(type: string, r: OperationResult, allowed: PayloadField[]): string | undefined {
  const filled = {
    objects: r.objects.length > 0,
    deleted: r.deleted.length > 0,
    logs: r.logs !== '',
    revisions: r.revisions.length > 0,
    actions: r.actions.length > 0,
  };
  const extra = (Object.keys(filled) as (keyof typeof filled)[]).filter((f) => filled[f] && !allowed.includes(f));
  return extra.length ? `a ${r.success ? 'successful' : 'failed'} ${type} result has no ${extra.join(', ')}` : undefined;
}

/**
 * The result recorded in place of one that broke the rules: FAILED, reason InvalidResult, saying what was wrong and
 * what the agent claimed; its payload (objects, deleted, logs, revisions, actions) is dropped.
 */
export function invalidResult(result: OperationResult, problem: string): OperationResult {
  const claimed = `${result.success ? 'success' : 'failure'}${result.statusCode ? ` ${result.statusCode}` : ''}${result.reason ? ` ${result.reason}` : ''}${result.message ? `: ${result.message}` : ''}`;
  return create(OperationResultSchema, {
    id: result.id,
    account: result.account,
    success: false,
    statusCode: result.statusCode,
    reason: INVALID_RESULT_REASON,
    message: `the agent's result breaks the protocol (${problem}); it reported ${claimed}. The operation may have been applied.`.slice(
      0,
      4000,
    ),
    duration: result.duration,
    kubernetesDuration: result.kubernetesDuration,
  });
}
