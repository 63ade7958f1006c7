/**
 * Orca's `deployManifest` description, read from the whole stage context Orca sends (unknown keys ignored): the
 * manifests and the fields Clouddriver's deploy description binds, with Clouddriver's defaults
 * (`enableArtifactBinding` and `enableTraffic` true, `skipSpecTemplateLabels` false). Manifests are validated and
 * expanded here (manifest-input.ts).
 */
import type { Artifact } from './deploy-types.js';
import { DeployPlanError, isRecord } from './deploy-types.js';
import type { Moniker } from './manifest-annotations.js';
import { LabelSelectorError, parseLabelSelectors, type LabelRequirement } from '../label-selectors.js';

export interface DeployDescription {
  /** The raw `manifests` list (or the legacy single `manifest`), not yet validated. */
  manifests: unknown[];
  moniker: Moniker;
  requiredArtifacts: Artifact[];
  optionalArtifacts: Artifact[];
  namespaceOverride: string;
  versioned?: boolean;
  enableArtifactBinding: boolean;
  skipSpecTemplateLabels: boolean;
  enableTraffic: boolean;
  services: string[];
  /** `RED_BLACK`, `BLUE_GREEN`, `HIGHLANDER`, `NONE` or absent. */
  strategy?: string;
  /**
   * `labelSelectors` when its `selectors` list is non-empty: only the manifests whose labels (after Spinnaker's own)
   * match are applied, as `kubectl apply --selector` filters its input; replace cannot filter. An empty list of
   * requirements (only ANY) selects everything.
   */
  labelSelectors?: LabelRequirement[];
  /** With label selectors, a deploy that applies nothing succeeds instead of failing. */
  allowNothingSelected: boolean;
}

/** A boolean as Jackson reads one: a JSON boolean or the strings `true` / `false`; anything else is the default. */
function bool(value: unknown, fallback: boolean): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  return fallback;
}

const optionalString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function artifacts(value: unknown): Artifact[] {
  return Array.isArray(value) ? (value.filter((a) => isRecord(a) && typeof a.type === 'string') as Artifact[]) : [];
}

function moniker(value: unknown): Moniker {
  if (!isRecord(value)) {
    throw new DeployPlanError('Every resource deployed via Spinnaker must be assigned a moniker: the description has no "moniker"');
  }
  const sequence = typeof value.sequence === 'number' && Number.isInteger(value.sequence) ? value.sequence : undefined;
  return {
    app: optionalString(value.app),
    cluster: optionalString(value.cluster),
    stack: optionalString(value.stack),
    detail: optionalString(value.detail),
    sequence,
  };
}

/** Reads a deployManifest description. Throws DeployPlanError when it has no moniker or malformed label selectors. */
export function readDeployDescription(raw: Record<string, unknown>): DeployDescription {
  const list = Array.isArray(raw.manifests) ? raw.manifests : [];
  const manifests = list.length === 0 && raw.manifest !== undefined && raw.manifest !== null ? [raw.manifest] : list;
  const versioned = raw.versioned === undefined || raw.versioned === null ? undefined : bool(raw.versioned, false);
  let labelSelectors: LabelRequirement[] | undefined;
  try {
    labelSelectors = parseLabelSelectors(raw.labelSelectors);
  } catch (err) {
    if (err instanceof LabelSelectorError) throw new DeployPlanError(err.message);
    throw err;
  }
  return {
    manifests,
    moniker: moniker(raw.moniker),
    requiredArtifacts: artifacts(raw.requiredArtifacts),
    optionalArtifacts: artifacts(raw.optionalArtifacts),
    namespaceOverride: typeof raw.namespaceOverride === 'string' && raw.namespaceOverride.trim() !== '' ? raw.namespaceOverride : '',
    versioned,
    enableArtifactBinding: bool(raw.enableArtifactBinding, true),
    skipSpecTemplateLabels: bool(raw.skipSpecTemplateLabels, false),
    enableTraffic: bool(raw.enableTraffic, true),
    services: Array.isArray(raw.services) ? raw.services.filter((s): s is string => typeof s === 'string') : [],
    strategy: optionalString(raw.strategy),
    labelSelectors,
    allowNothingSelected: bool(raw.allowNothingSelected, false),
  };
}
