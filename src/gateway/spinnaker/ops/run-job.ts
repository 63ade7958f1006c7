/**
 * `runJob` (Run Job (Manifest)): the Job is planned like a deploy with the recreate strategy forced
 * (deploy/run-job.ts) — a Job of the same name is deleted first, so the job runs again — and its result adds
 * `deployedNamesByLocation`, which Orca's WaitOnJobCompletion then polls through the job endpoint.
 */
import { planRunJob } from '../deploy/run-job.js';
import { isRecord } from '../deploy/deploy-types.js';
import type { PreparedOperation } from '../task-runner.js';
import { applyPlanned } from './apply-planned.js';
import { planWith, type DeployEnv } from './deploy-manifest.js';
import { accountOf, badDescription, type Description } from './description-fields.js';
import { resultOf } from './operation-result.js';

const PHASE = 'RUN_KUBERNETES_JOB';

/** Validates a runJob description. */
export function prepareRunJob(description: Description, env: DeployEnv): PreparedOperation {
  const account = accountOf(description);
  const manifest = description.manifest ?? (Array.isArray(description.manifests) ? description.manifests[0] : undefined);
  if (!isRecord(manifest)) throw badDescription('runJob needs manifest: the Job to run');
  if (String(manifest.kind ?? '').toLowerCase() !== 'job')
    throw badDescription(`Only kind of Job is accepted for the Run Job operation (got ${JSON.stringify(manifest.kind ?? null)})`);
  return {
    name: 'runJob',
    operationClass: 'KubernetesRunJobOperation',
    account,
    async run(ctx) {
      ctx.status(PHASE, 'Running Kubernetes job...');
      const plan = await planWith(ctx, account, { ...description, manifest }, env, planRunJob);
      const applied = await applyPlanned(ctx, account, plan.manifests, PHASE);
      const result = resultOf(
        applied,
        plan.createdArtifacts as Record<string, unknown>[],
        plan.boundArtifacts as Record<string, unknown>[],
      );
      ctx.status(PHASE, `Started ${Object.values(result.manifestNamesByNamespace).flat().join(', ')}`);
      return { ...result, deployedNamesByLocation: result.manifestNamesByNamespace };
    },
  };
}
