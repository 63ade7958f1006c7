/**
 * scale: sets spec.replicas through the scale subresource (as `kubectl scale`), so it works for any kind that has
 * one and honours the server's validation. The result object is the Scale the server answers.
 */
import type { ScaleSpec } from '../../gen/outpost/agent/v1/operation_pb.js';
import { namespaceFor, parseObject, type OperationContext, type Outcome } from './operation-context.js';
import { badRequest } from './operation-error.js';
import { resourcePath } from './resource-resolver.js';

/** Runs a scale operation. */
export async function runScale(ctx: OperationContext, spec: ScaleSpec): Promise<Outcome> {
  if (spec.name === '') throw badRequest('scale needs a name');
  const resource = await ctx.resolver.resolve(ctx.calls, spec.kind || 'Deployment', spec.apiVersion);
  if (!resource.subresources.includes('scale')) throw badRequest(`${resource.kind} has no scale subresource: it cannot be scaled`);
  const namespace = namespaceFor(resource.namespaced, spec.namespace);
  const response = await ctx.calls.request({
    method: 'PATCH',
    path: resourcePath(resource, namespace, spec.name, 'scale'),
    body: { spec: { replicas: spec.replicas } },
    contentType: 'application/merge-patch+json',
  });
  return {
    statusCode: response.status,
    message: `${resource.kind.toLowerCase()}/${spec.name} scaled to ${spec.replicas}`,
    objects: [parseObject(response.text)],
  };
}
