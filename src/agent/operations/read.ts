/**
 * The read-only operations: get (404 NotFound when missing), list (selectors, limit; all namespaces when none is
 * given), pod logs (container, tail lines, previous instance) and rollout history. Secrets come back scrubbed.
 */
import type { GetSpec, HistorySpec, ListSpec, LogsSpec } from '../../gen/outpost/agent/v1/operation_pb.js';
import { scrubObject } from '../../shared/secret-scrub.js';
import { namespaceFor, objectRef, parseObject, type Obj, type OperationContext, type Outcome } from './operation-context.js';
import { badRequest } from './operation-error.js';
import { pathSegment, resourcePath } from './resource-resolver.js';
import { readHistory } from './revisions.js';

/** Runs a get operation. */
export async function runGet(ctx: OperationContext, spec: GetSpec): Promise<Outcome> {
  if (spec.name === '') throw badRequest('get needs a name (use list for many objects)');
  const resource = await ctx.resolver.resolve(ctx.calls, spec.kind, spec.apiVersion);
  const namespace = namespaceFor(resource.namespaced, spec.namespace);
  const response = await ctx.calls.request({ method: 'GET', path: resourcePath(resource, namespace, spec.name) });
  return {
    statusCode: response.status,
    message: objectRef(resource.kind, namespace, spec.name),
    objects: [parseObject(response.text, resource.kind)],
  };
}

/** Runs a list operation. Items get their apiVersion and kind back (list items carry none). */
export async function runList(ctx: OperationContext, spec: ListSpec): Promise<Outcome> {
  if (spec.limit < 0) throw badRequest('limit must not be negative');
  const resource = await ctx.resolver.resolve(ctx.calls, spec.kind, spec.apiVersion);
  const { status, body } = await ctx.calls.json<{ items?: Obj[] }>({
    method: 'GET',
    path: resourcePath(resource, resource.namespaced && spec.namespace !== '' ? spec.namespace : undefined),
    query: {
      labelSelector: spec.labelSelector || undefined,
      fieldSelector: spec.fieldSelector || undefined,
      limit: spec.limit > 0 ? spec.limit : undefined,
    },
  });
  const objects = (body.items ?? []).map((item) =>
    scrubObject({ apiVersion: resource.apiVersion, kind: resource.kind, ...item }, resource.kind),
  );
  return {
    statusCode: status,
    message: `${objects.length} ${objects.length === 1 ? resource.kind.toLowerCase() : resource.resource}`,
    objects,
  };
}

/** Runs a logs operation. */
export async function runLogs(ctx: OperationContext, spec: LogsSpec): Promise<Outcome> {
  if (spec.pod === '') throw badRequest('logs needs a pod name');
  const namespace = spec.namespace || 'default';
  const response = await ctx.calls.request({
    method: 'GET',
    path: `/api/v1/namespaces/${pathSegment(namespace, 'namespace')}/pods/${pathSegment(spec.pod, 'pod')}/log`,
    query: {
      container: spec.container || undefined,
      tailLines: spec.tailLines !== undefined ? Number(spec.tailLines) : undefined,
      previous: spec.previous ? 'true' : undefined,
    },
    accept: 'text/plain, */*',
  });
  return { statusCode: response.status, message: `logs of pod ${namespace}/${spec.pod}`, logs: response.text };
}

/** Runs a history operation: every revision of the workload, oldest first, with its pod template. */
export async function runHistory(ctx: OperationContext, spec: HistorySpec): Promise<Outcome> {
  const history = await readHistory(ctx, spec);
  return {
    statusCode: 200,
    message: `${history.revisions.length} ${history.revisions.length === 1 ? 'revision' : 'revisions'} of ${history.resource.kind.toLowerCase()}/${spec.name}`,
    revisions: history.revisions.map(({ holder: _holder, ...entry }) => entry),
  };
}
