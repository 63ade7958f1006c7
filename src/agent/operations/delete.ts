/**
 * delete: one object by name, or every object of a kind matching a label selector (in one namespace — `default` when
 * none is given, as kubectl), with the propagation policy and grace period asked for; then waits until each object is
 * really gone (finalizers, foreground deletion of dependents), polling until 404 or a new uid, bounded by the
 * operation's timeout. A missing object (by name) is the 404 of the delete call.
 */
import { PropagationPolicy, type DeleteSpec } from '../../gen/outpost/agent/v1/operation_pb.js';
import { KubeHttpError } from '../kube/kube-client.js';
import { sleep } from '../stream/backoff.js';
import { namespaceFor, objectRef, parseObject, type Obj, type OperationContext, type Outcome } from './operation-context.js';
import { badRequest, OperationError, OutpostReason } from './operation-error.js';
import type { ResourceType } from '../kube/discovery.js';
import { resourcePath } from './resource-resolver.js';

interface Target {
  namespace?: string;
  name: string;
  uid?: string;
}

const POLICY: Record<PropagationPolicy, string | undefined> = {
  [PropagationPolicy.UNSPECIFIED]: undefined,
  [PropagationPolicy.FOREGROUND]: 'Foreground',
  [PropagationPolicy.BACKGROUND]: 'Background',
  [PropagationPolicy.ORPHAN]: 'Orphan',
};

function deleteOptions(spec: DeleteSpec): Obj {
  const body: Obj = { kind: 'DeleteOptions', apiVersion: 'v1' };
  const policy = POLICY[spec.propagationPolicy];
  if (policy) body.propagationPolicy = policy;
  if (spec.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = Number(spec.gracePeriodSeconds);
  return body;
}

async function gone(ctx: OperationContext, resource: ResourceType, target: Target): Promise<boolean> {
  try {
    const live = parseObject(
      (await ctx.calls.request({ method: 'GET', path: resourcePath(resource, target.namespace, target.name) })).text,
    );
    const uid = (live.metadata as Obj | undefined)?.uid;
    return target.uid !== undefined && uid !== target.uid; // a new object under the same name
  } catch (err) {
    if (err instanceof KubeHttpError && err.status === 404) return true;
    throw err;
  }
}

async function waitUntilGone(ctx: OperationContext, resource: ResourceType, targets: Target[]): Promise<void> {
  let pending = targets;
  let delay = ctx.settings.deletePollMs;
  while (pending.length > 0) {
    const stillThere: Target[] = [];
    for (const target of pending) if (!(await gone(ctx, resource, target))) stillThere.push(target);
    pending = stillThere;
    if (pending.length === 0) return;
    await sleep(delay, ctx.calls.signal);
    delay = Math.min(1000, delay * 1.5);
    if (ctx.calls.signal.aborted) {
      const names = pending.map((t) => objectRef(resource.kind, t.namespace, t.name)).join(', ');
      throw new OperationError(504, OutpostReason.Timeout, `timed out waiting for the deletion of ${names}`);
    }
  }
}

/** Runs a delete operation. */
export async function runDelete(ctx: OperationContext, spec: DeleteSpec): Promise<Outcome> {
  if ((spec.name === '') === (spec.labelSelector === '')) throw badRequest('delete needs exactly one of name and label_selector');
  const resource = await ctx.resolver.resolve(ctx.calls, spec.kind, spec.apiVersion);
  const namespace = namespaceFor(resource.namespaced, spec.namespace);
  const body = deleteOptions(spec);
  const targets: Target[] = [];
  let status = 200;
  if (spec.name !== '') {
    const response = await ctx.calls.request({ method: 'DELETE', path: resourcePath(resource, namespace, spec.name), body });
    status = response.status;
    const answer = parseObject(response.text);
    const meta = answer.metadata as Obj | undefined;
    // the answer is the object (or a Status for some kinds): keep its uid to tell a re-created object apart
    targets.push({ namespace, name: spec.name, uid: answer.kind === 'Status' ? undefined : (meta?.uid as string | undefined) });
  } else {
    const { body: list } = await ctx.calls.json<{ items?: Obj[] }>({
      method: 'GET',
      path: resourcePath(resource, namespace),
      query: { labelSelector: spec.labelSelector },
    });
    for (const item of list.items ?? []) {
      const meta = item.metadata as Obj;
      const target: Target = {
        namespace: meta.namespace as string | undefined,
        name: meta.name as string,
        uid: meta.uid as string | undefined,
      };
      try {
        const response = await ctx.calls.request({ method: 'DELETE', path: resourcePath(resource, target.namespace, target.name), body });
        status = response.status;
      } catch (err) {
        if (!(err instanceof KubeHttpError && err.status === 404)) throw err; // gone meanwhile: still deleted
      }
      targets.push(target);
    }
  }
  await waitUntilGone(ctx, resource, targets);
  const deleted = targets.map((t) => objectRef(resource.kind, t.namespace, t.name));
  return {
    statusCode: status,
    message:
      deleted.length === 0 ? `no ${resource.resource} matched the label selector "${spec.labelSelector}"` : `deleted ${deleted.join(', ')}`,
    deleted,
  };
}
