/**
 * rollout: `kubectl rollout` verbs. restart stamps the pod template with `kubectl.kubernetes.io/restartedAt`;
 * pause/resume set spec.paused (Deployments); undo copies the pod template of an earlier revision — a Deployment's
 * ReplicaSet (without its pod-template-hash label), a StatefulSet's or DaemonSet's ControllerRevision — into the
 * workload with a JSON patch guarded by the resourceVersion it was computed from, so the controller rolls back to
 * that revision (a Deployment reuses the ReplicaSet). As kubectl, an undo to the template already running is skipped.
 */
import { isDeepStrictEqual } from 'node:util';
import { RolloutAction, type RolloutSpec } from '../../gen/outpost/agent/v1/operation_pb.js';
import { isObj, namespaceFor, parseObject, type Obj, type OperationContext, type Outcome } from './operation-context.js';
import { KubeHttpError } from '../kube/kube-client.js';
import { badRequest } from './operation-error.js';
import { resourcePath } from './resource-resolver.js';
import { readHistory, REVISION_ANNOTATION, rollbackTarget } from './revisions.js';

/** The pod-template annotation `kubectl rollout restart` sets. */
const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

async function mergePatch(ctx: OperationContext, spec: RolloutSpec, patch: Obj, verb: string): Promise<Outcome> {
  const resource = await ctx.resolver.resolve(ctx.calls, spec.kind || 'Deployment', spec.apiVersion);
  const namespace = namespaceFor(resource.namespaced, spec.namespace);
  const response = await ctx.calls.request({
    method: 'PATCH',
    path: resourcePath(resource, namespace, spec.name),
    body: patch,
    contentType: 'application/merge-patch+json',
  });
  return {
    statusCode: response.status,
    message: `${resource.kind.toLowerCase()}/${spec.name} ${verb}`,
    objects: [parseObject(response.text)],
  };
}

/** Reads before giving up when the Deployment keeps changing between the read and the guarded patch. */
const UNDO_ATTEMPTS = 3;

/** The 422 of a JSON patch whose resourceVersion `test` failed: the Deployment changed since it was read. */
function isStaleRead(err: unknown): boolean {
  return err instanceof KubeHttpError && err.status === 422 && err.statusMessage.includes('/metadata/resourceVersion');
}

/** Undo, computed again from a fresh read when a concurrent change (e.g. the controller's) beat the patch. */
async function undo(ctx: OperationContext, spec: RolloutSpec): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await undoOnce(ctx, spec);
    } catch (err) {
      if (attempt >= UNDO_ATTEMPTS || !isStaleRead(err) || ctx.calls.signal.aborted) throw err;
    }
  }
}

async function undoOnce(ctx: OperationContext, spec: RolloutSpec): Promise<Outcome> {
  const history = await readHistory(ctx, spec);
  const workload = history.workload;
  const kind = history.resource.kind;
  const ref = `${kind.toLowerCase()}/${spec.name}`;
  const wSpec = isObj(workload.spec) ? workload.spec : {};
  if (kind === 'Deployment' && wSpec.paused === true)
    throw badRequest(`you cannot rollback a paused deployment; resume it first with the rollout resume action and try again`);
  const target = rollbackTarget(history, Number(spec.toRevision));
  if (!target.template) throw badRequest(`revision ${target.revision} of ${ref} (${target.name}) holds no pod template`);
  const template = structuredClone(target.template);
  const labels = isObj(template.metadata) && isObj(template.metadata.labels) ? template.metadata.labels : undefined;
  if (labels && kind === 'Deployment') delete labels['pod-template-hash'];
  const meta = workload.metadata as Obj;
  if (isDeepStrictEqual(wSpec.template, template)) {
    return {
      statusCode: 200,
      message: `${ref} skipped rollback (current template already matches revision ${target.revision})`,
      objects: [workload],
    };
  }
  const current = kind === 'Deployment' && isObj(meta.annotations) ? meta.annotations[REVISION_ANNOTATION] : undefined;
  const response = await ctx.calls.request({
    method: 'PATCH',
    path: resourcePath(history.resource, history.namespace, spec.name),
    body: [
      { op: 'test', path: '/metadata/resourceVersion', value: meta.resourceVersion },
      { op: 'replace', path: '/spec/template', value: template },
    ],
    contentType: 'application/json-patch+json',
  });
  const from = current !== undefined ? ` from revision ${String(current)}` : '';
  return {
    statusCode: response.status,
    message: `${ref} rolled back${from} to revision ${target.revision} (${target.name})`,
    objects: [parseObject(response.text)],
  };
}

/** Runs a rollout operation. */
export async function runRollout(ctx: OperationContext, spec: RolloutSpec): Promise<Outcome> {
  if (spec.name === '') throw badRequest('rollout needs a name');
  switch (spec.action) {
    case RolloutAction.RESTART:
      return mergePatch(
        ctx,
        spec,
        { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: new Date().toISOString() } } } } },
        'restarted',
      );
    case RolloutAction.PAUSE:
      return mergePatch(ctx, spec, { spec: { paused: true } }, 'paused');
    case RolloutAction.RESUME:
      return mergePatch(ctx, spec, { spec: { paused: null } }, 'resumed');
    case RolloutAction.UNDO:
      return undo(ctx, spec);
    default:
      throw badRequest('rollout needs an action: undo, pause, resume or restart');
  }
}
