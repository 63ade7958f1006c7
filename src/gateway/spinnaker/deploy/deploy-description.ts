/**
 * Orca's `deployManifest` description, read from the whole stage context Orca sends (unknown keys ignored): the
 * manifests and the fields Clouddriver's deploy description binds, with Clouddriver's defaults
 * (`enableArtifactBinding` and `enableTraffic` true, `skipSpecTemplateLabels` false). Manifests are validated and
 * expanded here (manifest-input.ts).
 */
import type { Artifact } from './deploy-types.js';
import { DeployPlanError, isRecord } from './deploy-types.js';
import type { Moniker } from './manifest-annotations.js';

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
  /** `labelSelectors.selectors` is non-empty (kubectl filters what it applies; replace cannot). */
  hasLabelSelectors: boolean;
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

/** Reads a deployManifest description. Throws DeployPlanError when it has no moniker. */
export function readDeployDescription(raw: Record<string, unknown>): DeployDescription {
  const list = Array.isArray(raw.manifests) ? raw.manifests : [];
  const manifests = list.length === 0 && raw.manifest !== undefined && raw.manifest !== null ? [raw.manifest] : list;
  const versioned = raw.versioned === undefined || raw.versioned === null ? undefined : bool(raw.versioned, false);
  const selectors = isRecord(raw.labelSelectors) ? raw.labelSelectors.selectors : undefined;
  return {
    manifests,
    moniker: moniker(raw.moniker),
    requiredArtifacts: artifacts(raw.requiredArtifacts),
    optionalArtifacts: artifacts(raw.optionalArtifacts),
    namespaceOverride:
      typeof raw.namespaceOverride === 'string' && raw.namespaceOverride.trim() !== '' ? raw.namespaceOverride : '',
    versioned,
    enableArtifactBinding: bool(raw.enableArtifactBinding, true),
    skipSpecTemplateLabels: bool(raw.skipSpecTemplateLabels, false),
    enableTraffic: bool(raw.enableTraffic, true),
    services: Array.isArray(raw.services) ? raw.services.filter((s): s is string => typeof s === 'string') : [],
    strategy: optionalString(raw.strategy),
    hasLabelSelectors: Array.isArray(selectors) && selectors.length > 0,
  };
}
