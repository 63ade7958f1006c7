/**
 * Applies a deploy plan's manifests in order, each with its strategy, as Outpost `apply` (and `delete`) operations:
 * recreate deletes the live object first (and waits until it is gone) then creates it; replace PUTs the whole object;
 * server-side apply (optionally forcing conflicts) or client-side apply otherwise; an object with only
 * `metadata.generateName` is created under a new name, which its created artifact then carries. Manifests the
 * deploy's label selectors did not select are skipped. Returns the objects as the API server returned them.
 */
import { create } from '@bufbuild/protobuf';
import { ApplySpecSchema, DeleteSpecSchema, PropagationPolicy } from '../../../gen/outpost/agent/v1/operation_pb.js';
import { AgentCallError } from '../agent-calls.js';
import type { PlannedManifest } from '../deploy/deploy-types.js';
import { agentKindOf } from '../deploy/kind-traits.js';
import { fullResourceName } from '../../status/kind-names.js';
import type { TaskContext } from '../task-runner.js';

/** Applies `planned` on `account`, writing progress lines under `phase`. */
export async function applyPlanned(
  ctx: TaskContext,
  account: string,
  planned: PlannedManifest[],
  phase: string,
): Promise<Record<string, unknown>[]> {
  const applied: Record<string, unknown>[] = [];
  for (const { manifest, strategy, reusedVersion, artifact, selected } of planned) {
    const name = fullResourceName(manifest);
    const namespace = manifest.metadata.namespace ?? '';
    if (!selected) {
      ctx.status(phase, `Skipping ${name}${namespace ? ` in ${namespace}` : ''}: its labels are not selected by the label selectors`);
      continue;
    }
    if (strategy.recreate && manifest.metadata.name) {
      ctx.status(phase, `Deleting ${name} before recreating it...`);
      try {
        await ctx.calls.run(account, {
          case: 'delete',
          value: create(DeleteSpecSchema, {
            kind: agentKindOf(manifest),
            namespace,
            name: manifest.metadata.name,
            propagationPolicy: PropagationPolicy.BACKGROUND,
          }),
        });
      } catch (err) {
        if (!(err instanceof AgentCallError && err.statusCode === 404)) throw err;
      }
    }
    const how = strategy.replace ? 'replacing' : strategy.serverSideApply !== 'off' ? 'server-side applying' : 'applying';
    ctx.status(
      phase,
      `Deploying manifest ${name}${namespace ? ` in ${namespace}` : ''} (${how}${reusedVersion ? `, reusing identical ${reusedVersion}` : ''})...`,
    );
    const { objects } = await ctx.calls.run(account, {
      case: 'apply',
      value: create(ApplySpecSchema, {
        manifests: JSON.stringify(manifest),
        namespace,
        replace: strategy.replace,
        serverSide: !strategy.replace && strategy.serverSideApply !== 'off',
        forceConflicts: strategy.serverSideApply === 'force-conflicts',
      }),
    });
    applied.push(...(objects.length ? objects : [manifest]));
    // A generateName object has its name only now: its artifact names it.
    const created = (objects[0]?.metadata as { name?: string } | undefined)?.name;
    if (!manifest.metadata.name && created) {
      artifact.name = created;
      artifact.reference = created;
    }
  }
  return applied;
}
