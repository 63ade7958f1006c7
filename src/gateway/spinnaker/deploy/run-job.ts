/**
 * Run Job (Manifest): Orca's `runJob` description carries one Job (`manifest`), the `application` and an optional
 * `namespace`. Clouddriver deploys it as a one-manifest deployManifest with moniker `{app: application}` after
 * forcing the recreate strategy, because a Job is immutable: applying the same Job again would not run it again.
 * A Job with `metadata.generateName` (and no name) is created under a fresh name instead.
 */
import { registeredKindOf } from '../../status/kind-names.js';
import { planDeploy } from './deploy-plan.js';
import { forceRecreate } from './deploy-strategy.js';
import type { DeployContext, DeployPlan } from './deploy-types.js';
import { DeployPlanError, isRecord } from './deploy-types.js';
import { stringMap } from './manifest-annotations.js';

/**
 * Plans a runJob operation. The Job gets `strategy.spinnaker.io/recreate: "true"` (other strategy annotations
 * removed), `namespace` (when non-empty) replaces its namespace, and `requiredArtifacts` / `optionalArtifacts` bind
 * as in a deploy. The caller deletes any Job of the same name before creating it (the recreate strategy), or
 * creates it when it only has a generateName, and reports `deployedNamesByLocation`. Throws DeployPlanError when
 * the manifest is not a Job.
 */
export async function planRunJob(description: Record<string, unknown>, context: DeployContext): Promise<DeployPlan> {
  const manifest = description.manifest;
  if (!isRecord(manifest)) throw new DeployPlanError('The Run Job description has no manifest');
  const job = structuredClone(manifest);
  if (registeredKindOf(String(job.apiVersion ?? ''), String(job.kind ?? ''))?.name !== 'job') {
    throw new DeployPlanError('Only kind of Job is accepted for the Run Job operation.');
  }
  if (!isRecord(job.metadata)) job.metadata = {};
  const metadata = job.metadata as Record<string, unknown>;
  if (typeof description.namespace === 'string' && description.namespace !== '') metadata.namespace = description.namespace;
  if (metadata.annotations === undefined || metadata.annotations === null || isRecord(metadata.annotations)) {
    forceRecreate(stringMap(metadata, 'annotations'));
  }
  return planDeploy(
    {
      manifests: [job],
      moniker: { app: typeof description.application === 'string' ? description.application : undefined },
      requiredArtifacts: description.requiredArtifacts,
      optionalArtifacts: description.optionalArtifacts,
    },
    context,
  );
}
