/**
 * `deleteManifest`: one object by `manifestName`, or — with an empty name — every object of the given `kinds` in the
 * `location` matching `labelSelectors`. `options` is Clouddriver's string map: `cascading` true → background, false →
 * orphan, any other value is the propagation policy itself; `orphanDependents` "true" → orphan; `gracePeriodSeconds`.
 * Always returns a result object (Orca expects one), listing what was deleted — empty when the object was already gone.
 */
import { create } from '@bufbuild/protobuf';
import { DeleteSpecSchema, PropagationPolicy } from '../../../gen/outpost/agent/v1/operation_pb.js';
import { AgentCallError } from '../agent-calls.js';
import { parseKind, type ParsedKind } from '../../status/kind-names.js';
import type { PreparedOperation } from '../task-runner.js';
import { accountOf, badDescription, manifestTarget, namespaceOfLocation, stringField, type Description } from './description-fields.js';
import { namesResult } from './operation-result.js';
import { labelSelectorText, LabelSelectorError, parseLabelSelectors } from '../label-selectors.js';

const PHASE = 'DELETE_KUBERNETES_MANIFEST';

/** The delete options of a description. */
function deleteOptions(description: Description): { policy: PropagationPolicy; gracePeriodSeconds?: bigint } {
  const raw = description.options;
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw)))
    throw badDescription('options must be an object');
  const options = (raw ?? {}) as Record<string, unknown>;
  const text = (key: string) => (options[key] === undefined || options[key] === null ? undefined : String(options[key]));
  let policy = PropagationPolicy.BACKGROUND;
  const cascading = text('cascading');
  if (cascading !== undefined) {
    const value = cascading.toLowerCase();
    if (value === 'true') policy = PropagationPolicy.BACKGROUND;
    else if (value === 'false' || value === 'orphan') policy = PropagationPolicy.ORPHAN;
    else if (value === 'foreground') policy = PropagationPolicy.FOREGROUND;
    else if (value === 'background') policy = PropagationPolicy.BACKGROUND;
    else throw badDescription(`options.cascading must be true, false, foreground, background or orphan (got ${JSON.stringify(cascading)})`);
  }
  if (text('orphanDependents')?.toLowerCase() === 'true') policy = PropagationPolicy.ORPHAN;
  const grace = text('gracePeriodSeconds');
  if (grace !== undefined && !/^\d+$/.test(grace))
    throw badDescription(`options.gracePeriodSeconds must be a whole number of seconds (got ${JSON.stringify(grace)})`);
  return { policy, gracePeriodSeconds: grace === undefined ? undefined : BigInt(grace) };
}

/** Validates a deleteManifest description. */
export function prepareDelete(description: Description): PreparedOperation {
  const account = accountOf(description);
  const { policy, gracePeriodSeconds } = deleteOptions(description);
  const name = stringField(description, 'manifestName');
  const base = { name: 'deleteManifest', operationClass: 'KubernetesDeleteManifestOperation', account };
  if (name?.trim()) {
    const target = manifestTarget(description);
    return {
      ...base,
      async run(ctx) {
        ctx.status(PHASE, `Beginning deletion of manifest ${target.fullName}...`);
        ctx.status(PHASE, 'Calling delete operation...');
        try {
          await ctx.calls.run(account, {
            case: 'delete',
            value: create(DeleteSpecSchema, {
              kind: target.kind.agentKind,
              namespace: target.namespace,
              name: target.name,
              propagationPolicy: policy,
              gracePeriodSeconds,
            }),
          });
        } catch (err) {
          if (!(err instanceof AgentCallError && err.statusCode === 404)) throw err;
          ctx.status(PHASE, `${target.fullName} did not exist`);
          return namesResult(target.namespace, []);
        }
        ctx.status(PHASE, `Deleted ${target.fullName}`);
        return namesResult(target.namespace, [target.fullName]);
      },
    };
  }
  const kindsRaw = description.kinds;
  if (!Array.isArray(kindsRaw) || kindsRaw.length === 0 || kindsRaw.some((k) => typeof k !== 'string' || !k.trim())) {
    throw badDescription('deleteManifest needs manifestName, or kinds (a list of kind names) with labelSelectors');
  }
  const kinds = kindsRaw.map((k) => parseKind(k as string)!) as ParsedKind[];
  const selector = deleteSelector(description.labelSelectors);
  const namespace = namespaceOfLocation(stringField(description, 'location'));
  return {
    ...base,
    async run(ctx) {
      ctx.status(PHASE, `Beginning deletion of ${kinds.map((k) => k.spinnakerName).join(', ')} matching "${selector}"...`);
      const deleted: string[] = [];
      for (const kind of kinds) {
        const { result } = await ctx.calls.run(account, {
          case: 'delete',
          value: create(DeleteSpecSchema, {
            kind: kind.agentKind,
            namespace,
            labelSelector: selector,
            propagationPolicy: policy,
            gracePeriodSeconds,
          }),
        });
        // The agent names each deleted object `Kind/namespace/name` (or `Kind/name`).
        for (const ref of result.deleted) deleted.push(`${kind.spinnakerName} ${ref.slice(ref.lastIndexOf('/') + 1)}`);
      }
      ctx.status(PHASE, deleted.length ? `Deleted ${deleted.join(', ')}` : 'Nothing matched the label selectors');
      return namesResult(namespace, deleted);
    },
  };
}

/** The selector of a delete in label mode: it must name at least one requirement (ANY alone would delete everything). */
function deleteSelector(raw: unknown): string {
  let requirements: ReturnType<typeof parseLabelSelectors>;
  try {
    requirements = parseLabelSelectors(raw);
  } catch (err) {
    if (err instanceof LabelSelectorError) throw badDescription(err.message);
    throw err;
  }
  if (requirements === undefined) throw badDescription('labelSelectors.selectors must be a non-empty list');
  if (requirements.length === 0) throw badDescription('labelSelectors select every object (only ANY): refusing to delete them all');
  return labelSelectorText(requirements);
}
