/**
 * The rollout verbs of Orca's manifest stages — `undoRolloutManifest`, `rollingRestartManifest`,
 * `pauseRolloutManifest`, `resumeRolloutManifest` — as Outpost `rollout` operations (and `history` to turn
 * `numRevisionsBack` into a revision, as Clouddriver does: the revision `numRevisionsBack` places before the newest).
 * A rolling restart of a StatefulSet or DaemonSet stamps its pod template like `kubectl rollout restart`. None
 * returns a result object.
 */
import { create } from '@bufbuild/protobuf';
import {
  HistorySpecSchema,
  PatchSpecSchema,
  PatchType,
  RolloutAction,
  RolloutSpecSchema,
} from '../../../gen/outpost/agent/v1/operation_pb.js';
import { TaskFailure, type PreparedOperation, type TaskContext } from '../task-runner.js';
import { accountOf, badDescription, intField, manifestTarget, type Description, type ManifestTarget } from './description-fields.js';
import { counted } from '../../../shared/counted.js';

type Verb = 'undoRolloutManifest' | 'rollingRestartManifest' | 'pauseRolloutManifest' | 'resumeRolloutManifest';

const VERBS: Record<Verb, { phase: string; operationClass: string; action: RolloutAction; what: string; kinds: string[] }> = {
  undoRolloutManifest: {
    phase: 'UNDO_ROLLOUT_KUBERNETES_MANIFEST',
    operationClass: 'KubernetesUndoRolloutManifestOperation',
    action: RolloutAction.UNDO,
    what: 'undo rollout',
    kinds: ['deployment', 'statefulSet', 'daemonSet'],
  },
  rollingRestartManifest: {
    phase: 'ROLLING_RESTART_KUBERNETES_MANIFEST',
    operationClass: 'KubernetesRollingRestartManifestOperation',
    action: RolloutAction.RESTART,
    what: 'rolling restart',
    kinds: ['deployment', 'statefulSet', 'daemonSet'],
  },
  pauseRolloutManifest: {
    phase: 'PAUSE_ROLLOUT_KUBERNETES_MANIFEST',
    operationClass: 'KubernetesPauseRolloutManifestOperation',
    action: RolloutAction.PAUSE,
    what: 'pause rollout',
    kinds: ['deployment'],
  },
  resumeRolloutManifest: {
    phase: 'RESUME_ROLLOUT_KUBERNETES_MANIFEST',
    operationClass: 'KubernetesResumeRolloutManifestOperation',
    action: RolloutAction.RESUME,
    what: 'resume rollout',
    kinds: ['deployment'],
  },
};

/** True for the names this module handles. */
export function isRolloutVerb(name: string): name is Verb {
  return Object.hasOwn(VERBS, name);
}

/** Validates one of the rollout descriptions. */
export function prepareRollout(verb: Verb, description: Description): PreparedOperation {
  const account = accountOf(description);
  const target = manifestTarget(description);
  const spec = VERBS[verb];
  const revision = verb === 'undoRolloutManifest' ? intField(description, 'revision') : undefined;
  const back = verb === 'undoRolloutManifest' ? intField(description, 'numRevisionsBack') : undefined;
  if (verb === 'undoRolloutManifest' && revision === undefined && back === undefined)
    throw badDescription('undoRolloutManifest needs numRevisionsBack or revision');
  if ((back !== undefined && back < 1) || (revision !== undefined && revision < 1))
    throw badDescription('numRevisionsBack and revision must be 1 or more');
  return {
    name: verb,
    operationClass: spec.operationClass,
    account,
    async run(ctx) {
      ctx.status(spec.phase, `Starting ${spec.what} operation...`);
      const kind = target.kind.registered?.name;
      if (!kind || !spec.kinds.includes(kind)) {
        throw new TaskFailure(
          `Resource kind ${target.kind.spinnakerName} does not support ${spec.what} (supported: ${spec.kinds.join(', ')})`,
          'IllegalArgumentException',
        );
      }
      if (verb === 'rollingRestartManifest' && kind !== 'deployment') return restartByTemplate(ctx, account, target, spec.phase);
      let toRevision = revision ?? 0;
      if (back !== undefined && revision === undefined) toRevision = await revisionBack(ctx, account, target, back);
      ctx.status(spec.phase, `Calling ${spec.what} operation${toRevision ? ` (to revision ${toRevision})` : ''}...`);
      await ctx.calls.run(account, {
        case: 'rollout',
        value: create(RolloutSpecSchema, {
          kind: target.kind.agentKind,
          namespace: target.namespace,
          name: target.name,
          action: spec.action,
          toRevision: BigInt(toRevision),
        }),
      });
      ctx.status(spec.phase, `Finished ${spec.what} of ${target.fullName}`);
      return undefined;
    },
  };
}

/** The revision `back` steps before the newest in the sorted rollout history; fails when there are too few. */
async function revisionBack(ctx: TaskContext, account: string, target: ManifestTarget, back: number): Promise<number> {
  ctx.status(VERBS.undoRolloutManifest.phase, 'Looking up rollout history...');
  const { result } = await ctx.calls.run(account, {
    case: 'history',
    value: create(HistorySpecSchema, { kind: target.kind.agentKind, namespace: target.namespace, name: target.name }),
  });
  const revisions = result.revisions.map((r) => Number(r.revision)).sort((a, b) => a - b);
  const index = revisions.length - back - 1;
  if (index < 0) {
    throw new TaskFailure(
      `Can't rollback ${target.fullName} ${counted(back, 'revision')} back: it has ${counted(revisions.length, 'revision')} (${revisions.join(', ') || 'none'})`,
      'IllegalArgumentException',
    );
  }
  const picked = revisions[index]!;
  ctx.status(VERBS.undoRolloutManifest.phase, `Picked revision ${picked}...`);
  return picked;
}

/** `kubectl rollout restart` for kinds the agent's rollout verb does not cover: stamp the pod template. */
async function restartByTemplate(ctx: TaskContext, account: string, target: ManifestTarget, phase: string) {
  const patch = { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } } } };
  ctx.status(phase, 'Calling rolling restart operation...');
  await ctx.calls.run(account, {
    case: 'patch',
    value: create(PatchSpecSchema, {
      kind: target.kind.agentKind,
      namespace: target.namespace,
      name: target.name,
      type: PatchType.STRATEGIC,
      patch: JSON.stringify(patch),
    }),
  });
  ctx.status(phase, `Finished rolling restart of ${target.fullName}`);
  return undefined;
}
