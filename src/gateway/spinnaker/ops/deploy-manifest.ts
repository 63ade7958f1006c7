/**
 * `deployManifest` (Deploy (Manifest)): the manifests are planned as Clouddriver does (deploy/deploy-plan.ts:
 * monikers, artifact annotations and labels, versions, artifact binding, traffic) and applied in order; the result
 * names every deployed object and carries `createdArtifacts` and `boundArtifacts`, which Orca promotes and waits on.
 * With `labelSelectors`, only the manifests they select are applied (and reported); none selected fails the task
 * unless `allowNothingSelected`, as in Clouddriver. A description without manifests (or with malformed label
 * selectors) is a 400; a plan that cannot be made (an unbound required artifact…) fails the task.
 */
import type { CacheReads } from '../cache-reads.js';
import { planDeploy } from '../deploy/deploy-plan.js';
import { readDeployDescription } from '../deploy/deploy-description.js';
import { DeployPlanError, type DeployPlan } from '../deploy/deploy-types.js';
import { createLiveReads } from '../live-reads.js';
import { TaskFailure, type PreparedOperation, type TaskContext } from '../task-runner.js';
import { applyPlanned } from './apply-planned.js';
import { createDeployContext } from './deploy-context.js';
import { accountOf, badDescription, type Description } from './description-fields.js';
import { resultOf } from './operation-result.js';
import { counted } from '../../../shared/counted.js';

/** What deploying needs besides the description (reads go through the task's own calls). */
export interface DeployEnv {
  cache: CacheReads;
}

const PHASE = 'DEPLOY_KUBERNETES_MANIFEST';

/** Plans with the live context, turning planning errors into task failures. */
export async function planWith(
  ctx: TaskContext,
  account: string,
  description: Description,
  env: DeployEnv,
  plan: typeof planDeploy,
): Promise<DeployPlan> {
  const context = await createDeployContext(
    account,
    description,
    createLiveReads(() => ctx.calls),
    env.cache,
  );
  try {
    return await plan(description, context);
  } catch (err) {
    if (err instanceof DeployPlanError) throw new TaskFailure(err.message, 'IllegalArgumentException');
    throw err;
  }
}

/** Validates a deployManifest description. */
export function prepareDeploy(description: Description, env: DeployEnv): PreparedOperation {
  const account = accountOf(description);
  let manifests: unknown[];
  try {
    manifests = readDeployDescription(description).manifests;
  } catch (err) {
    if (err instanceof DeployPlanError) throw badDescription(err.message);
    throw err;
  }
  if (manifests.filter((m) => m !== null && m !== undefined).length === 0)
    throw badDescription('No manifests were given to deploy (manifests is missing or empty)');
  if (manifests.some((m) => m !== null && (typeof m !== 'object' || Array.isArray(m))))
    throw badDescription('every item of manifests must be an object (a Kubernetes manifest)');
  return {
    name: 'deployManifest',
    operationClass: 'KubernetesDeployManifestOperation',
    account,
    async run(ctx) {
      ctx.status(PHASE, 'Beginning deployment of manifests...');
      const plan = await planWith(ctx, account, description, env, planDeploy);
      const applied = await applyPlanned(ctx, account, plan.manifests, PHASE);
      if (plan.labelSelector !== undefined && applied.length === 0 && !plan.allowNothingSelected) {
        throw new TaskFailure(
          `nothing deployed to account ${account} with label selector(s) ${plan.labelSelector}`,
          'IllegalStateException',
        );
      }
      ctx.status(PHASE, `Deploy manifest task completed successfully for ${counted(applied.length, 'manifest')}`);
      return resultOf(applied, plan.createdArtifacts as Record<string, unknown>[], plan.boundArtifacts as Record<string, unknown>[]);
    },
  };
}
