/**
 * `cleanupArtifacts`, which Orca sends after every deploy with the deployed manifests: older versions beyond each
 * object's `strategy.spinnaker.io/max-version-history` are deleted (deploy/cleanup-artifacts.ts decides which). The
 * result names what was deleted, by namespace, with `manifests: null` as Clouddriver returns it.
 */
import { create } from '@bufbuild/protobuf';
import { DeleteSpecSchema, PropagationPolicy } from '../../../gen/outpost/agent/v1/operation_pb.js';
import { AgentCallError } from '../agent-calls.js';
import { versionsToDelete } from '../deploy/cleanup-artifacts.js';
import { isRecord, type KubeObject } from '../deploy/deploy-types.js';
import { agentKindOf } from '../deploy/kind-traits.js';
import { fullResourceName } from '../../status/kind-names.js';
import type { PreparedOperation } from '../task-runner.js';
import { createDeployContext } from './deploy-context.js';
import { createLiveReads } from '../live-reads.js';
import type { DeployEnv } from './deploy-manifest.js';
import { accountOf, badDescription, type Description } from './description-fields.js';
import { counted } from '../../../shared/counted.js';

const PHASE = 'CLEANUP_KUBERNETES_ARTIFACTS';

/** Validates a cleanupArtifacts description. */
export function prepareCleanup(description: Description, env: DeployEnv): PreparedOperation {
  const account = accountOf(description);
  const raw = description.manifests ?? [];
  if (!Array.isArray(raw)) throw badDescription('manifests must be a list of the deployed manifests');
  const deployed = raw.filter(
    (m): m is KubeObject => isRecord(m) && isRecord(m.metadata) && typeof m.apiVersion === 'string' && typeof m.kind === 'string',
  );
  return {
    name: 'cleanupArtifacts',
    operationClass: 'KubernetesCleanupArtifactsOperation',
    account,
    async run(ctx) {
      ctx.status(PHASE, 'Beginning cleanup of old artifact versions...');
      const context = await createDeployContext(
        account,
        { manifests: deployed },
        createLiveReads(() => ctx.calls),
        env.cache,
      );
      const doomed = await versionsToDelete(deployed, context.existingVersions);
      const names: Record<string, string[]> = {};
      for (const object of doomed) {
        const namespace = object.metadata.namespace ?? '';
        ctx.status(PHASE, `Deleting ${fullResourceName(object)}${namespace ? ` in ${namespace}` : ''}...`);
        try {
          await ctx.calls.run(account, {
            case: 'delete',
            value: create(DeleteSpecSchema, {
              kind: agentKindOf(object),
              namespace,
              name: object.metadata.name,
              propagationPolicy: PropagationPolicy.BACKGROUND,
            }),
          });
        } catch (err) {
          if (!(err instanceof AgentCallError && err.statusCode === 404)) throw err;
        }
        (names[namespace] ??= []).push(fullResourceName(object));
      }
      ctx.status(PHASE, doomed.length ? `Deleted ${counted(doomed.length, 'old version')}` : 'No old versions to delete');
      return { manifestNamesByNamespace: names, manifests: null, createdArtifacts: [], boundArtifacts: [] };
    },
  };
}
