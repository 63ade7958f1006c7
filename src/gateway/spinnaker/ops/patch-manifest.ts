/**
 * `patchManifest`: a strategic-merge, JSON-merge or JSON (RFC 6902) patch of one object (`options.mergeStrategy`,
 * default strategic), as an Outpost `patch` operation. For strategic and merge patches the required and optional
 * artifacts bind into the patch body first (image references), as Clouddriver does. Always returns a result object
 * naming the patched object (Orca promotes it and waits for it to be stable). A JSON patch of a Secret that would read
 * the Secret's values is a 400 before any task exists (src/shared/secret-patch-rules.ts).
 */
import { create } from '@bufbuild/protobuf';
import { PatchSpecSchema, PatchType } from '../../../gen/outpost/agent/v1/operation_pb.js';
import { isSecretKind } from '../../../shared/secret-kind.js';
import { secretPatchProblem } from '../../../shared/secret-patch-rules.js';
import type { PreparedOperation } from '../task-runner.js';
import { accountOf, badDescription, manifestTarget, type Description } from './description-fields.js';
import { namesResult, resultOf } from './operation-result.js';

const PHASE = 'PATCH_KUBERNETES_MANIFEST';
const TYPES: Record<string, PatchType> = { strategic: PatchType.STRATEGIC, merge: PatchType.MERGE, json: PatchType.JSON };

/** Binds artifacts into a patch body (strategic and merge patches); returns the body and the bound artifacts. */
export type PatchBinder = (
  body: Record<string, unknown>,
  description: Description,
) => { body: Record<string, unknown>; bound: Record<string, unknown>[] };

/** Validates a patchManifest description. */
export function preparePatch(description: Description, bind?: PatchBinder): PreparedOperation {
  const account = accountOf(description);
  const target = manifestTarget(description);
  const options = (description.options ?? {}) as Record<string, unknown>;
  if (typeof options !== 'object' || Array.isArray(options)) throw badDescription('options must be an object');
  const strategy = String(options.mergeStrategy ?? 'strategic').toLowerCase();
  const type = TYPES[strategy];
  if (type === undefined)
    throw badDescription(`options.mergeStrategy must be strategic, merge or json (got ${JSON.stringify(options.mergeStrategy)})`);
  const body = description.patchBody;
  if (type === PatchType.JSON) {
    if (!Array.isArray(body) || body.length === 0)
      throw badDescription('patchBody must be a non-empty list of JSON patch operations for mergeStrategy json');
    const problem = isSecretKind(target.kind.agentKind) ? secretPatchProblem(body) : undefined;
    if (problem) throw badDescription(`patchBody of ${target.fullName} refused: ${problem}`);
  } else if (!body || typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length === 0) {
    throw badDescription(`patchBody must be a non-empty object for mergeStrategy ${strategy}`);
  }
  return {
    name: 'patchManifest',
    operationClass: 'KubernetesPatchManifestOperation',
    account,
    async run(ctx) {
      ctx.status(PHASE, `Beginning patching of manifest ${target.fullName}`);
      let patch: unknown = body;
      let bound: Record<string, unknown>[] = [];
      if (type !== PatchType.JSON && bind) ({ body: patch, bound } = bind(body as Record<string, unknown>, description));
      ctx.status(PHASE, `Patching manifest (${strategy})...`);
      const { objects } = await ctx.calls.run(account, {
        case: 'patch',
        value: create(PatchSpecSchema, {
          kind: target.kind.agentKind,
          namespace: target.namespace,
          name: target.name,
          type,
          patch: JSON.stringify(patch),
        }),
      });
      ctx.status(PHASE, `Patched ${target.fullName}`);
      if (objects.length === 0) return { ...namesResult(target.namespace, [target.fullName]), boundArtifacts: bound };
      return resultOf(objects, [], bound);
    },
  };
}
