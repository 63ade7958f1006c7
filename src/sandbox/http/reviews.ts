/**
 * `selfsubjectaccessreviews` and `selfsubjectrulesreviews` (authorization.k8s.io/v1): answered from the same RBAC
 * evaluation that guards every request, so `kubectl auth can-i` and client SSARs see the server's real decisions.
 * Nothing is stored.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from '../auth.js';
import { errors } from '../errors.js';
import type { KindInfo } from '../kinds.js';
import type { Authorizer } from '../rbac.js';
import { isPlainObject } from '../types.js';
import { decodeObjectBody, readBody, sendJson } from './io.js';
import { decodeReviewProtobuf, isProtobuf } from './protobuf.js';
import type { RequestInfo } from './request-info.js';

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Handles a create on a review kind. */
export async function handleReview(
  authorizer: Authorizer,
  user: UserInfo,
  req: IncomingMessage,
  res: ServerResponse,
  ri: RequestInfo,
  info: KindInfo,
): Promise<void> {
  if (ri.verb !== 'create' || ri.name) throw errors.methodNotAllowed();
  const raw = await readBody(req);
  const body = isProtobuf(req.headers['content-type']) ? decodeReviewProtobuf(raw) : decodeObjectBody(req.headers['content-type'], raw);
  if (!isPlainObject(body)) throw errors.badRequest('the request body must be a JSON object');
  if (body.kind !== undefined && body.kind !== info.kind) {
    throw errors.badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${info.kind})`);
  }
  const spec = isPlainObject(body.spec) ? body.spec : {};
  const base = { apiVersion: 'authorization.k8s.io/v1', kind: info.kind, metadata: { creationTimestamp: null }, spec };
  if (info.kind === 'SelfSubjectRulesReview') {
    const namespace = str(spec.namespace) ?? 'default';
    const rules = authorizer.rulesFor(user, namespace);
    sendJson(res, 201, { ...base, status: { ...rules, incomplete: false } });
    return;
  }
  const resource = isPlainObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  const nonResource = isPlainObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
  if (!resource && !nonResource) {
    throw errors.invalid(info, '', [
      {
        field: 'spec.resourceAttributes',
        message: 'Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
      },
    ]);
  }
  const decision = resource
    ? authorizer.authorize(user, {
        resourceRequest: true,
        verb: str(resource.verb) ?? '',
        group: str(resource.group) ?? '',
        resource: str(resource.resource) ?? '',
        subresource: str(resource.subresource),
        name: str(resource.name),
        namespace: str(resource.namespace),
      })
    : authorizer.authorize(user, { resourceRequest: false, verb: str(nonResource!.verb) ?? '', path: str(nonResource!.path) ?? '' });
  const status: Record<string, unknown> = { allowed: decision.allowed };
  if (decision.reason) status.reason = decision.reason;
  sendJson(res, 201, { ...base, status });
}
