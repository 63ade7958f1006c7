/**
 * `enableManifest` / `disableManifest` (red/black and highlander traffic): a server group (ReplicaSet, StatefulSet,
 * DaemonSet…) receives a Service's traffic when its pods carry the Service's selector labels. Enable adds those
 * labels to the workload's pod template and to its running pods; disable removes them — as Clouddriver's Service
 * handler does. The Services come from `loadBalancers` (["service NAME"]) or the target's
 * `traffic.spinnaker.io/load-balancers` annotation. A Service whose selector shares a key with the workload's own
 * selector cannot be managed this way (the workload would lose its pods): the task fails saying so.
 */
import { create } from '@bufbuild/protobuf';
import { PatchSpecSchema, PatchType } from '../../../gen/outpost/agent/v1/operation_pb.js';
import type { AgentCalls } from '../agent-calls.js';
import { parseResourceName } from '../../status/kind-names.js';
import { createLiveReads, type LiveReads } from '../live-reads.js';
import type { KubernetesObject } from '../manifest-types.js';
import { TaskFailure, type PreparedOperation } from '../task-runner.js';
import { accountOf, badDescription, manifestTarget, type Description } from './description-fields.js';
import { counted } from '../../../shared/counted.js';

/** The annotation listing a workload's load balancers (a JSON list of "service NAME"). */
const LOAD_BALANCERS_ANNOTATION = 'traffic.spinnaker.io/load-balancers';

/** Parses a list of "service NAME"; throws a message for anything else. */
function serviceNames(list: unknown, where: string): string[] {
  if (!Array.isArray(list)) throw new Error(`${where} must be a list of "service NAME"`);
  return list.map((item) => {
    const parsed = typeof item === 'string' ? parseResourceName(item) : undefined;
    if (parsed?.kind.registered?.name !== 'service') throw new Error(`${where}: ${JSON.stringify(item)} is not "service NAME"`);
    return parsed.name;
  });
}

/** The selector of each Service, read live; fails naming a missing one. */
async function serviceSelectors(reads: LiveReads, account: string, namespace: string, names: string[]): Promise<Record<string, string>[]> {
  const out: Record<string, string>[] = [];
  for (const name of names) {
    const service = await reads.get(account, 'Service', namespace, name);
    if (!service) throw new TaskFailure(`load balancer service ${name} does not exist in ${namespace}`, 'NotFoundException');
    const selector = ((service.spec as { selector?: Record<string, string> } | undefined)?.selector ?? {}) as Record<string, string>;
    if (Object.keys(selector).length === 0)
      throw new TaskFailure(
        `load balancer service ${name} has no selector: Spinnaker cannot route its traffic`,
        'IllegalArgumentException',
      );
    out.push(selector);
  }
  return out;
}

/** Fails when a Service selector key is also a key of the workload's own selector. */
function checkSelectorOverlap(workload: KubernetesObject, selectors: Record<string, string>[]): void {
  const own = ((workload.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels ??
    {}) as Record<string, string>;
  for (const selector of selectors) {
    const shared = Object.keys(selector).filter((k) => Object.hasOwn(own, k));
    if (shared.length)
      throw new TaskFailure(
        `Service selector must have no label keys in common with the target workload's label selector (shared: ${shared.join(', ')})`,
        'IllegalArgumentException',
      );
  }
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** JSON patch operations adding (enable) or removing (disable) `labels` under `path` of an object with `existing`. */
function labelOps(path: string, existing: Record<string, string> | undefined, labels: Record<string, string>, enable: boolean): unknown[] {
  const ops: unknown[] = [];
  if (enable && !existing) ops.push({ op: 'add', path, value: {} });
  for (const [key, value] of Object.entries(labels)) {
    const at = `${path}/${escapePointer(key)}`;
    if (enable) ops.push({ op: 'add', path: at, value });
    else if (existing && Object.hasOwn(existing, key) && existing[key] === value) ops.push({ op: 'remove', path: at });
  }
  return ops;
}

async function jsonPatch(calls: AgentCalls, account: string, kind: string, namespace: string, name: string, ops: unknown[]) {
  if (ops.length === 0) return;
  await calls.run(account, {
    case: 'patch',
    value: create(PatchSpecSchema, { kind, namespace, name, type: PatchType.JSON, patch: JSON.stringify(ops) }),
  });
}

/** Validates an enableManifest / disableManifest description. */
export function prepareTraffic(verb: 'enableManifest' | 'disableManifest', description: Description): PreparedOperation {
  const account = accountOf(description);
  const target = manifestTarget(description);
  const enable = verb === 'enableManifest';
  let explicit: string[] | undefined;
  if (description.loadBalancers !== undefined && description.loadBalancers !== null) {
    try {
      explicit = serviceNames(description.loadBalancers, 'loadBalancers');
    } catch (err) {
      throw badDescription((err as Error).message);
    }
  }
  const phase = enable ? 'ENABLE_MANIFEST' : 'DISABLE_MANIFEST';
  return {
    name: verb,
    operationClass: enable ? 'KubernetesEnableManifestOperation' : 'KubernetesDisableManifestOperation',
    account,
    async run(ctx) {
      ctx.status(phase, `Starting ${enable ? 'enable' : 'disable'} operation on ${target.fullName}...`);
      const reads = createLiveReads(() => ctx.calls);
      const workload = await reads.get(account, target.kind.agentKind, target.namespace, target.name);
      if (!workload)
        throw new TaskFailure(`${target.fullName} does not exist in ${target.namespace || 'the cluster'}`, 'NotFoundException');
      let names = explicit;
      if (!names) {
        const annotation = workload.metadata.annotations?.[LOAD_BALANCERS_ANNOTATION];
        try {
          names = annotation ? serviceNames(JSON.parse(annotation), LOAD_BALANCERS_ANNOTATION) : [];
        } catch (err) {
          throw new TaskFailure(
            `the ${LOAD_BALANCERS_ANNOTATION} annotation of ${target.fullName} is not a JSON list of "service NAME": ${(err as Error).message}`,
            'IllegalArgumentException',
          );
        }
      }
      if (names.length === 0) {
        ctx.status(phase, `${target.fullName} has no load balancers: nothing to ${enable ? 'enable' : 'disable'}`);
        return undefined;
      }
      const selectors = await serviceSelectors(reads, account, target.namespace, names);
      checkSelectorOverlap(workload, selectors);
      const labels = Object.assign({}, ...selectors) as Record<string, string>;
      const template = (workload.spec as { template?: { metadata?: { labels?: Record<string, string> } } } | undefined)?.template;
      if (template) {
        ctx.status(
          phase,
          `${enable ? 'Adding' : 'Removing'} the labels of ${names.map((n) => `service ${n}`).join(', ')} ${enable ? 'to' : 'from'} the pod template...`,
        );
        await jsonPatch(
          ctx.calls,
          account,
          target.kind.agentKind,
          target.namespace,
          target.name,
          labelOps('/spec/template/metadata/labels', template.metadata?.labels, labels, enable),
        );
      }
      const own = (workload.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels;
      const uid = workload.metadata.uid;
      if (own && Object.keys(own).length && uid) {
        const selector = Object.entries(own)
          .map(([k, v]) => `${k}=${v}`)
          .join(',');
        const pods = (await reads.list(account, 'Pod', target.namespace, { labelSelector: selector })).filter((p) =>
          ((p.metadata.ownerReferences ?? []) as { uid?: string }[]).some((o) => o.uid === uid),
        );
        ctx.status(phase, `${enable ? 'Adding' : 'Removing'} the labels on ${counted(pods.length, 'running pod')}...`);
        for (const pod of pods)
          await jsonPatch(
            ctx.calls,
            account,
            'Pod',
            target.namespace,
            String(pod.metadata.name),
            labelOps('/metadata/labels', pod.metadata.labels, labels, enable),
          );
      }
      ctx.status(phase, `${enable ? 'Enabled' : 'Disabled'} ${target.fullName} in ${names.map((n) => `service ${n}`).join(', ')}`);
      return undefined;
    },
  };
}
