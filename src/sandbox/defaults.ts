/**
 * Defaulting applied on every write, as kube-apiserver does on decode: Services get a type, a cluster IP (kept across
 * updates) and complete ports; Deployments get their strategy, revision history limit and progress deadline;
 * StatefulSets and DaemonSets their update strategy (kubectl rollout status needs it) and history limit; Jobs their
 * parallelism, completions and backoff limit;
 * Namespaces their name label, finalizer and Active phase; Pods their restart/DNS/scheduler basics. Only the defaults
 * clients visibly rely on are filled.
 */
import type { KindInfo } from './kinds.js';
import { isPlainObject, type KubeObject } from './types.js';

let nextServiceIp = 10;

function allocateClusterIp(): string {
  const n = nextServiceIp++;
  return `10.96.${(n >> 8) & 255}.${n & 255}`;
}

function defaultService(obj: KubeObject, old: KubeObject | undefined): void {
  const spec = isPlainObject(obj.spec) ? obj.spec : (obj.spec = {});
  const oldSpec = old && isPlainObject(old.spec) ? old.spec : {};
  spec.type ??= 'ClusterIP';
  if (spec.type !== 'ExternalName') {
    if (spec.clusterIP === undefined || spec.clusterIP === '')
      spec.clusterIP = typeof oldSpec.clusterIP === 'string' ? oldSpec.clusterIP : allocateClusterIp();
    if (spec.clusterIP !== 'None' || spec.clusterIPs === undefined) spec.clusterIPs ??= [spec.clusterIP];
    spec.sessionAffinity ??= 'None';
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
    spec.internalTrafficPolicy ??= 'Cluster';
  }
  if (Array.isArray(spec.ports)) {
    spec.ports = spec.ports.map((p) =>
      isPlainObject(p) ? { ...p, protocol: p.protocol ?? 'TCP', targetPort: p.targetPort ?? p.port } : p,
    );
  }
}

function defaultDeployment(obj: KubeObject): void {
  const spec = isPlainObject(obj.spec) ? obj.spec : undefined;
  if (!spec) return;
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  // as SetDefaults_Deployment: RollingUpdate unless told, and each missing fencepost 25%
  const strategy = isPlainObject(spec.strategy) ? spec.strategy : (spec.strategy = {});
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const rolling = isPlainObject(strategy.rollingUpdate) ? strategy.rollingUpdate : (strategy.rollingUpdate = {});
    rolling.maxUnavailable ??= '25%';
    rolling.maxSurge ??= '25%';
  }
}

function defaultStatefulSet(obj: KubeObject): void {
  const spec = isPlainObject(obj.spec) ? obj.spec : undefined;
  if (!spec) return;
  spec.replicas ??= 1;
  spec.podManagementPolicy ??= 'OrderedReady';
  spec.revisionHistoryLimit ??= 10;
  if (!isPlainObject(spec.updateStrategy)) spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: 0 } };
  else if (spec.updateStrategy.type === undefined) spec.updateStrategy.type = 'RollingUpdate';
}

function defaultDaemonSet(obj: KubeObject): void {
  const spec = isPlainObject(obj.spec) ? obj.spec : undefined;
  if (!spec) return;
  spec.revisionHistoryLimit ??= 10;
  if (!isPlainObject(spec.updateStrategy))
    spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } };
  else if (spec.updateStrategy.type === undefined) spec.updateStrategy.type = 'RollingUpdate';
}

/** Jobs select their own pods by controller uid unless spec.manualSelector, as the API server arranges it. */
function defaultJob(obj: KubeObject, old: KubeObject | undefined): void {
  const spec = isPlainObject(obj.spec) ? obj.spec : undefined;
  if (!spec) return;
  const uid = old?.metadata.uid ?? obj.metadata.uid;
  if (spec.manualSelector !== true && uid) {
    const oldSpec = old && isPlainObject(old.spec) ? old.spec : {};
    const labels = {
      'batch.kubernetes.io/controller-uid': uid,
      'controller-uid': uid,
      'batch.kubernetes.io/job-name': obj.metadata.name ?? '',
      'job-name': obj.metadata.name ?? '',
    };
    spec.selector ??= oldSpec.selector ?? { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
    const template = isPlainObject(spec.template) ? spec.template : (spec.template = {});
    const meta = isPlainObject(template.metadata) ? template.metadata : (template.metadata = {});
    meta.labels = { ...(isPlainObject(meta.labels) ? meta.labels : {}), ...labels };
  }
  if (spec.completions === undefined && spec.parallelism === undefined) spec.completions = 1;
  spec.parallelism ??= 1;
  spec.backoffLimit ??= 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
}

function defaultNamespace(obj: KubeObject): void {
  const name = obj.metadata.name;
  if (name) obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': name };
  const spec = isPlainObject(obj.spec) ? obj.spec : (obj.spec = {});
  spec.finalizers ??= ['kubernetes'];
  if (!obj.metadata.deletionTimestamp) {
    const status = isPlainObject(obj.status) ? obj.status : (obj.status = {});
    status.phase ??= 'Active';
  }
}

function defaultPod(obj: KubeObject): void {
  const spec = isPlainObject(obj.spec) ? obj.spec : undefined;
  if (!spec) return;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.serviceAccountName ??= 'default';
}

/** Fills defaults into `obj` (mutated; it is the store's private copy). `old` is the stored object on updates. */
export function applyDefaults(info: KindInfo, obj: KubeObject, old?: KubeObject): void {
  if (info.group === '' && info.kind === 'Service') defaultService(obj, old);
  else if (info.group === 'apps' && info.kind === 'Deployment') defaultDeployment(obj);
  else if (info.group === 'apps' && info.kind === 'StatefulSet') defaultStatefulSet(obj);
  else if (info.group === 'apps' && info.kind === 'DaemonSet') defaultDaemonSet(obj);
  else if (info.group === 'batch' && info.kind === 'Job') defaultJob(obj, old);
  else if (info.group === '' && info.kind === 'Namespace') defaultNamespace(obj);
  else if (info.group === '' && info.kind === 'Pod') defaultPod(obj);
}
