/**
 * What Clouddriver's per-kind handlers decide during a deploy, as data: the deploy priority (lower goes first, so
 * namespaces precede what lives in them and ConfigMaps precede the workloads that mount them), which artifact
 * references a kind can hold, whether it receives traffic from Services and whether it can be scaled.
 */
import { parseKind, registeredKindOf, spinnakerKindOf } from '../../status/kind-names.js';
import { DeployPlanError } from './deploy-types.js';

/** Which artifact references a kind holds (see artifact-replacers.ts). */
export type ReplacerSet = 'podTemplate' | 'pod' | 'hpa' | 'none';

export interface KindTraits {
  deployPriority: number;
  replacers: ReplacerSet;
  /** Spinnaker can point Services at it (`traffic.spinnaker.io/load-balancers`). */
  receivesTraffic: boolean;
  /** `strategy.spinnaker.io/use-source-capacity` applies to it. */
  scalable: boolean;
}

const LOWEST = 1000;

/** Clouddriver's deploy priorities by registered kind name; unlisted kinds (custom resources) deploy last. */
const PRIORITY: Record<string, number> = {
  namespace: 0,
  clusterRole: 20,
  role: 20,
  clusterRoleBinding: 30,
  roleBinding: 30,
  customResourceDefinition: 30,
  serviceAccount: 40,
  storageClass: 40,
  persistentVolume: 40,
  mutatingWebhookConfiguration: 40,
  validatingWebhookConfiguration: 40,
  configMap: 50,
  secret: 50,
  persistentVolumeClaim: 50,
  service: 70,
  ingress: 70,
  networkPolicy: 70,
  apiService: 80,
  podDisruptionBudget: 90,
  limitRange: 90,
  podPreset: 90,
  podSecurityPolicy: 90,
  deployment: 100,
  replicaSet: 100,
  statefulSet: 100,
  daemonSet: 100,
  job: 100,
  cronJob: 100,
  pod: 100,
  horizontalpodautoscaler: 110,
};

const POD_TEMPLATE_KINDS = new Set(['deployment', 'replicaSet', 'statefulSet', 'daemonSet', 'job', 'cronJob']);
const TRAFFIC_KINDS = new Set([...POD_TEMPLATE_KINDS, 'pod']);
const SCALABLE_KINDS = new Set(['deployment', 'replicaSet', 'statefulSet']);
const UNDEPLOYABLE = new Set(['event', 'controllerRevision']);

/**
 * The deploy traits of an object's kind. Throws DeployPlanError for kinds Clouddriver refuses to deploy (Events,
 * ControllerRevisions); the caller names the item in its own message.
 */
export function kindTraits(apiVersion: string, kind: string): KindTraits {
  const registered = registeredKindOf(apiVersion, kind)?.name;
  if (registered && UNDEPLOYABLE.has(registered)) {
    throw new DeployPlanError(`objects of kind ${kind} cannot be deployed`);
  }
  if (!registered) return { deployPriority: LOWEST, replacers: 'none', receivesTraffic: false, scalable: false };
  return {
    deployPriority: PRIORITY[registered] ?? LOWEST,
    replacers: POD_TEMPLATE_KINDS.has(registered)
      ? 'podTemplate'
      : registered === 'pod'
        ? 'pod'
        : registered === 'horizontalpodautoscaler'
          ? 'hpa'
          : 'none',
    receivesTraffic: TRAFFIC_KINDS.has(registered),
    scalable: SCALABLE_KINDS.has(registered),
  };
}

/** The kind name the agent resolves for an object (`Deployment`, `CronTab.stable.example.com`). */
export function agentKindOf(object: { apiVersion: string; kind: string }): string {
  return parseKind(spinnakerKindOf(object.apiVersion, object.kind))?.agentKind ?? object.kind;
}
