/**
 * `scaleManifest`: sets the replicas of a Deployment, ReplicaSet or StatefulSet through its scale subresource (an
 * Outpost `scale` operation). Returns no result object; Orca then waits for the object to be stable.
 */
import { create } from '@bufbuild/protobuf';
import { ScaleSpecSchema } from '../../../gen/outpost/agent/v1/operation_pb.js';
import { TaskFailure, type PreparedOperation } from '../task-runner.js';
import { accountOf, badDescription, intField, manifestTarget, type Description } from './description-fields.js';

const PHASE = 'SCALE_KUBERNETES_MANIFEST';
const SCALABLE = new Set(['deployment', 'replicaSet', 'statefulSet']);

/** Validates a scaleManifest description. */
export function prepareScale(description: Description): PreparedOperation {
  const account = accountOf(description);
  const target = manifestTarget(description);
  const replicas = intField(description, 'replicas');
  if (replicas === undefined) throw badDescription('replicas is required');
  if (replicas < 0) throw badDescription(`replicas must be 0 or more (got ${replicas})`);
  return {
    name: 'scaleManifest',
    operationClass: 'KubernetesScaleManifestOperation',
    account,
    async run(ctx) {
      ctx.status(PHASE, `Starting scale operation on ${target.fullName} in ${target.namespace || 'the cluster'}...`);
      if (!target.kind.registered || !SCALABLE.has(target.kind.registered.name)) {
        throw new TaskFailure(`Resource kind ${target.kind.spinnakerName} does not support scaling`, 'IllegalArgumentException');
      }
      ctx.status(PHASE, `Calling scale operation (replicas: ${replicas})...`);
      await ctx.calls.run(account, {
        case: 'scale',
        value: create(ScaleSpecSchema, { kind: target.kind.agentKind, namespace: target.namespace, name: target.name, replicas }),
      });
      ctx.status(PHASE, `Scaled ${target.fullName} to ${replicas} replicas`);
      return undefined;
    },
  };
}
