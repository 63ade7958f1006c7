/**
 * patch: one object with a JSON patch, a JSON merge patch or a strategic merge patch (unspecified: strategic for
 * built-in kinds, merge for custom resources). The server's answer is the verdict, 415 for strategic patches of
 * custom resources included. A JSON patch of a Secret that would read the Secret's values (copy, move or test of its
 * data) is refused before any write, whatever the gateway let through (src/shared/secret-patch-rules.ts).
 */
import { PatchType, type PatchSpec } from '../../gen/outpost/agent/v1/operation_pb.js';
import { secretPatchProblem } from '../../shared/secret-patch-rules.js';
import type { ResourceType } from '../kube/discovery.js';
import { parsePatchDocument } from './manifests.js';
import { namespaceFor, parseObject, type OperationContext, type Outcome } from './operation-context.js';
import { badRequest } from './operation-error.js';
import { resourcePath } from './resource-resolver.js';

const CONTENT_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;

/** Runs a patch operation. */
export async function runPatch(ctx: OperationContext, spec: PatchSpec): Promise<Outcome> {
  if (spec.name === '') throw badRequest('patch needs a name');
  const document = parsePatchDocument(spec.patch);
  const resource = await ctx.resolver.resolve(ctx.calls, spec.kind, spec.apiVersion);
  const type =
    spec.type === PatchType.JSON
      ? 'json'
      : spec.type === PatchType.MERGE
        ? 'merge'
        : spec.type === PatchType.STRATEGIC
          ? 'strategic'
          : resource.builtin
            ? 'strategic'
            : 'merge';
  if (type === 'json' && !Array.isArray(document)) throw badRequest('a JSON patch must be a list of operations');
  const problem = type === 'json' && isSecret(resource) ? secretPatchProblem(document) : undefined;
  if (problem) throw badRequest(`JSON patch of Secret ${JSON.stringify(spec.name)} refused: ${problem}`);
  if (type !== 'json' && (typeof document !== 'object' || document === null || Array.isArray(document)))
    throw badRequest(`a ${type} patch must be an object`);
  const namespace = namespaceFor(resource.namespaced, spec.namespace);
  const response = await ctx.calls.request({
    method: 'PATCH',
    path: resourcePath(resource, namespace, spec.name),
    body: document,
    contentType: CONTENT_TYPES[type],
  });
  return {
    statusCode: response.status,
    message: `${resource.kind.toLowerCase()}/${spec.name} patched`,
    objects: [parseObject(response.text)],
  };
}

/** The core Secret resource, as discovery resolved the operation's kind (whatever spelling it used). */
function isSecret(resource: ResourceType): boolean {
  return resource.group === '' && resource.resource === 'secrets';
}
