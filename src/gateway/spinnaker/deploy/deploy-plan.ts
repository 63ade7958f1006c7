/**
 * Plans a Deploy (Manifest) the way Clouddriver's deploy operation does, without touching the cluster: manifests
 * are expanded and ordered, artifacts bound (required and optional artifacts, plus the objects of this deploy that
 * precede each manifest in deploy order, so a versioned ConfigMap's new name reaches the workloads mounting it),
 * versions chosen, annotations and labels written and names made versioned. The caller applies the result in order.
 */
import { registeredKindOf, spinnakerKindOf } from '../../status/kind-names.js';
import { labelSelectorText, matchesLabels } from '../label-selectors.js';
import { replaceArtifacts } from './artifact-replacers.js';
import { canonicalJson, CONTENT_DIGEST_ANNOTATION, contentDigest } from './content-digest.js';
import { readDeployDescription, type DeployDescription } from './deploy-description.js';
import { readStrategy, STRATEGY_ANNOTATIONS } from './deploy-strategy.js';
import type { Artifact, DeployContext, DeployPlan, KubeObject, PlannedManifest } from './deploy-types.js';
import { DeployPlanError, isRecord } from './deploy-types.js';
import { annotateArtifact, applyMoniker, setTrafficAnnotation, stringMap, type Moniker } from './manifest-annotations.js';
import { agentKindOf } from './kind-traits.js';
import { prepareManifests, type InputManifest } from './manifest-input.js';
import { chooseVersion, formatVersion, type VersionChoice } from './resource-versions.js';
import { attachLoadBalancers } from './traffic.js';

/** Clouddriver keys the artifacts available for binding by type, name and location: one artifact per key. */
const artifactKey = (a: Artifact) => JSON.stringify([a.type, a.name ?? null, a.location ?? '']);

/** Required artifacts are compared with bound ones on type, name, version, location and reference. */
const identityKey = (a: Artifact) => JSON.stringify([a.type, a.name ?? null, a.version ?? null, a.location ?? null, a.reference ?? null]);

function describeArtifact(a: Artifact): string {
  const parts = [a.type, a.name ?? '(no name)'];
  if (a.reference !== undefined && a.reference !== a.name) parts.push(`(reference ${a.reference})`);
  if (a.location) parts.push(`in ${a.location}`);
  return parts.join(' ');
}

function checkRequiredBound(d: DeployDescription, bound: readonly Artifact[]): void {
  if (!d.enableArtifactBinding) return;
  const boundKeys = new Set(bound.map(identityKey));
  const unbound = d.requiredArtifacts.filter((a) => !boundKeys.has(identityKey(a)));
  if (unbound.length === 0) return;
  throw new DeployPlanError(
    `The following required artifacts could not be bound: '${unbound.map(describeArtifact).join("', '")}'. ` +
      'Check that the Docker image name above matches the name used in the image field of your manifest. ' +
      'Failing the stage as this is likely a configuration error.',
  );
}

async function sourceReplicas(m: KubeObject, choice: VersionChoice | undefined, context: DeployContext): Promise<number | undefined> {
  const source = choice?.latest
    ? choice.latest.object
    : await context.liveObject?.(agentKindOf(m), m.metadata.namespace ?? '', m.metadata.name ?? '');
  const replicas = isRecord(source?.spec) ? source.spec.replicas : undefined;
  return typeof replicas === 'number' ? replicas : undefined;
}

async function planOne(
  input: InputManifest,
  d: DeployDescription,
  context: DeployContext,
  available: Map<string, Artifact>,
  requested: readonly KubeObject[],
  bound: Map<string, Artifact>,
): Promise<PlannedManifest> {
  const { manifest: m, where, traits } = input;
  const maxHistory = readStrategy(m.metadata.annotations).maxVersionHistory;
  if ((d.strategy === 'RED_BLACK' || d.strategy === 'BLUE_GREEN') && maxHistory !== undefined && maxHistory < 2) {
    throw new DeployPlanError(
      `${where}: the max version history specified in your manifest conflicts with the behavior of the Red/Black rollout strategy. ` +
        `Please update your ${STRATEGY_ANNOTATIONS.maxVersionHistory} annotation to a value greater than or equal to 2.`,
    );
  }
  const namespace = m.metadata.namespace ?? '';
  for (const a of replaceArtifacts(m, traits.replacers, [...available.values()], namespace, context.account)) {
    bound.set(canonicalJson(a), a);
  }

  const strategy = readStrategy(m.metadata.annotations);
  const versioned = strategy.versioned ?? d.versioned ?? registeredKindOf(m.apiVersion, m.kind)?.versionedByDefault ?? false;
  const baseName = m.metadata.name;
  const kindName = spinnakerKindOf(m.apiVersion, m.kind);
  let choice: VersionChoice | undefined;
  let digest: string | undefined;
  if (versioned) {
    if (!baseName) throw new DeployPlanError(`${where} (${kindName}) is versioned and so needs metadata.name, not generateName`);
    digest = contentDigest(m);
    choice = chooseVersion(m, digest, await context.existingVersions(agentKindOf(m), namespace, baseName), baseName);
  }

  const version = choice ? formatVersion(choice.version) : '';
  const artifact: Artifact = {
    type: `kubernetes/${kindName}`,
    name: baseName,
    location: namespace,
    version,
    reference: baseName === undefined || version === '' ? baseName : `${baseName}-${version}`,
    customKind: false,
    metadata: { account: context.account },
  };
  available.set(artifactKey(artifact), artifact);
  annotateArtifact(m, artifact);

  if (strategy.useSourceCapacity && traits.scalable) {
    const replicas = await sourceReplicas(m, choice, context);
    if (replicas !== undefined && isRecord(m.spec)) m.spec.replicas = replicas;
  }
  if (traits.receivesTraffic) {
    setTrafficAnnotation(m, d.services);
    if (d.enableTraffic) await attachLoadBalancers(m, requested, context.liveObject?.bind(context));
  }

  const moniker: Moniker = { ...d.moniker };
  if (choice) moniker.sequence = choice.version;
  if (!moniker.cluster) moniker.cluster = `${kindName} ${baseName ?? m.metadata.generateName}`;
  applyMoniker(m, moniker, d.skipSpecTemplateLabels);
  if (digest !== undefined) stringMap(m.metadata, 'annotations')[CONTENT_DIGEST_ANNOTATION] = digest;
  if (artifact.reference !== undefined) m.metadata.name = artifact.reference;

  const selected = d.labelSelectors === undefined || matchesLabels(d.labelSelectors, m.metadata.labels);
  const planned: PlannedManifest = { manifest: m, strategy, artifact, versioned, selected };
  if (choice?.reused) planned.reusedVersion = version;
  return planned;
}

/**
 * Plans a deployManifest operation. `description` is Orca's stage context (unknown keys ignored). Reads the cluster
 * only through `context`: `existingVersions` once per versioned object, `liveObject` for Services named in
 * `services` that this deploy does not contain and for `use-source-capacity` on unversioned objects.
 *
 * The caller must apply the `selected` manifests in the order given (the others are left alone, and a deploy with
 * label selectors that selects nothing fails unless `allowNothingSelected`), each with its `strategy` (an object with
 * `metadata.generateName` and no name must be created, not applied; its artifact has no name or reference until
 * then), report `createdArtifacts` and `boundArtifacts` as the operation's outputs, and strip Secret data from
 * anything it reports. Throws DeployPlanError for invalid input, an unbound required artifact, a Service that
 * cannot be attached, or `replace` combined with label selectors.
 */
export async function planDeploy(description: Record<string, unknown>, context: DeployContext): Promise<DeployPlan> {
  const d = readDeployDescription(description);
  const inputs = prepareManifests(d.manifests, d.namespaceOverride, (apiVersion, kind) => context.isNamespaced(apiVersion, kind));
  const available = new Map<string, Artifact>();
  if (d.enableArtifactBinding) {
    for (const a of [...d.requiredArtifacts, ...d.optionalArtifacts]) {
      if (!available.has(artifactKey(a))) available.set(artifactKey(a), a);
    }
  }
  const requested = inputs.map((i) => i.manifest);
  const bound = new Map<string, Artifact>();
  const manifests: PlannedManifest[] = [];
  for (const input of inputs) manifests.push(await planOne(input, d, context, available, requested, bound));

  const boundArtifacts = [...bound.values()];
  checkRequiredBound(d, boundArtifacts);
  if (d.labelSelectors !== undefined && manifests.some((p) => p.strategy.replace)) {
    throw new DeployPlanError('label selectors not supported with replace strategy, not deploying');
  }
  return {
    manifests,
    createdArtifacts: manifests.map((p) => p.artifact),
    boundArtifacts,
    labelSelector: d.labelSelectors && labelSelectorText(d.labelSelectors),
    allowNothingSelected: d.allowNothingSelected,
  };
}
