/**
 * The shapes Deploy (Manifest) planning works on: kork Artifacts as Orca sends and reads them, Kubernetes objects as
 * plain JSON, the deploy strategy read from `strategy.spinnaker.io/*` annotations, and the plan handed to the part
 * that applies manifests to the cluster. Planning is pure: the only reads of the cluster go through `DeployContext`.
 */

/** A kork Artifact as Orca sends and reads it. Unknown fields must be kept when passed through. */
export interface Artifact {
  type: string;
  name?: string;
  version?: string;
  location?: string;
  reference?: string;
  customKind?: boolean;
  metadata?: Record<string, unknown>;
  artifactAccount?: string;
  [k: string]: unknown;
}

/** A Kubernetes object as plain JSON. */
export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    [k: string]: unknown;
  };
  [k: string]: unknown;
};

/**
 * How one object is sent to the cluster. At most one of `recreate`, `replace` and server-side apply is in effect
 * (Clouddriver picks recreate, then replace, then server-side apply, else client-side apply).
 */
export interface DeployStrategy {
  serverSideApply: 'off' | 'on' | 'force-conflicts';
  replace: boolean;
  recreate: boolean;
  /** `strategy.spinnaker.io/versioned` when the object carries it. */
  versioned?: boolean;
  /** `strategy.spinnaker.io/max-version-history` when it is an integer. */
  maxVersionHistory?: number;
  useSourceCapacity: boolean;
}

export interface PlannedManifest {
  manifest: KubeObject;
  strategy: DeployStrategy;
  /** The created artifact for this object */
  artifact: Artifact;
  versioned: boolean;
  /** set when an existing identical version is reused (nothing to change, but still applied idempotently) */
  reusedVersion?: string;
  /** False when the description's label selectors do not select this object: it is planned (and its artifact created) but not applied. */
  selected: boolean;
}

export interface DeployPlan {
  /** In deploy order (namespaces first, workloads after what they mount, attachments last); apply in this order. */
  manifests: PlannedManifest[];
  createdArtifacts: Artifact[];
  boundArtifacts: Artifact[];
  /** The label selectors the deploy was filtered by (Kubernetes form), when it had any. */
  labelSelector?: string;
  /** With label selectors, succeed even when no manifest is selected. */
  allowNothingSelected: boolean;
}

/** The cluster reads planning needs, supplied by the caller. */
export interface DeployContext {
  account: string;
  /** True when objects of this kind live in a namespace (discovery, or the registry for known kinds). */
  isNamespaced(apiVersion: string, kind: string): boolean;
  /**
   * The live objects of `agentKind` in `namespace` that are versions of `baseName` (their
   * `artifact.spinnaker.io/name` annotation, or a `<baseName>-vNNN` name, says so). Include `metadata.annotations`
   * and `metadata.creationTimestamp`.
   */
  existingVersions(agentKind: string, namespace: string, baseName: string): Promise<KubeObject[]>;
  /**
   * One live object, or undefined when it does not exist. Optional: without it a load balancer named in `services`
   * must be deployed in the same request, and `use-source-capacity` on an unversioned object keeps the manifest's
   * replicas.
   */
  liveObject?(agentKind: string, namespace: string, name: string): Promise<KubeObject | undefined>;
}

/** A deploy that cannot be planned; the message is written for the Spinnaker user and names the item at fault. */
export class DeployPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeployPlanError';
  }
}

/** True for a plain JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
