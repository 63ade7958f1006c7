/**
 * A Helm repository's `index.yaml`, read as Clouddriver's `IndexParser` reads it: chart names are the keys of
 * `entries`, each entry has a `version` and `urls`; a blank version means the latest one, the largest by version
 * order (Clouddriver takes the maximum by Maven's `ComparableVersion`, which orders semver-shaped versions as semver
 * does: numerically per dot-separated part, a pre-release before its release); relative chart URLs are resolved
 * against the repository URL with a trailing slash.
 */
import { parse as parseYaml } from 'yaml';
import { artifactNotFound, badArtifact, upstreamFailed } from './artifact-errors.js';

/** One chart version of the index. */
interface IndexEntry {
  version: string;
  urls: string[];
}

/** The parsed index: chart name → its versions, as listed. */
export type HelmIndex = Map<string, IndexEntry[]>;

/** Parses `index.yaml`; a 502 naming the repository when it is not an index. */
export function parseHelmIndex(text: string, repository: string): HelmIndex {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch {
    throw upstreamFailed(`Invalid index.yaml file in repository ${repository}`);
  }
  const entries = (doc as { entries?: unknown } | null)?.entries;
  if (!entries || typeof entries !== 'object' || Array.isArray(entries)) {
    throw upstreamFailed(`Invalid index.yaml file in repository ${repository}`);
  }
  const index: HelmIndex = new Map();
  for (const [name, list] of Object.entries(entries as Record<string, unknown>)) {
    if (!Array.isArray(list)) continue;
    index.set(
      name,
      list
        .filter((e): e is Record<string, unknown> => !!e && typeof e === 'object')
        .map((e) => ({
          version: e.version === undefined || e.version === null ? '' : String(e.version),
          urls: Array.isArray(e.urls) ? e.urls.filter((u): u is string => typeof u === 'string') : [],
        })),
    );
  }
  return index;
}

function entriesOf(index: HelmIndex, chart: string): IndexEntry[] {
  if (!chart) throw badArtifact('Artifact name field should not be empty');
  const entries = index.get(chart);
  if (!entries || entries.length === 0) throw artifactNotFound(`Could not find correct entry with artifact name ${chart}`);
  return entries;
}

/** The versions of `chart`, in index order; 404 for a chart the index does not have. */
export function chartVersions(index: HelmIndex, chart: string): string[] {
  return entriesOf(index, chart).map((e) => e.version);
}

/** The chart URLs of `chart` at `version` (blank: the latest), absolute; 404 when the chart or version is not there. */
export function chartUrls(index: HelmIndex, chart: string, version: string, repository: string): { version: string; urls: string[] } {
  const entries = entriesOf(index, chart);
  const wanted = version.trim() ? version : latestVersion(entries.map((e) => e.version));
  const urls = entries.filter((e) => e.version === wanted).flatMap((e) => e.urls);
  if (urls.length === 0) throw artifactNotFound(`Could not find correct entry with artifact version ${wanted}`);
  const base = repository.endsWith('/') ? repository : `${repository}/`;
  return { version: wanted, urls: urls.map((u) => resolveUrl(u, base)) };
}

function resolveUrl(ref: string, base: string): string {
  try {
    return new URL(ref, base).toString();
  } catch {
    return ref;
  }
}

/** The largest of `versions` by {@link compareVersions}. */
export function latestVersion(versions: readonly string[]): string {
  return versions.reduce((best, v) => (compareVersions(v, best) > 0 ? v : best), versions[0] ?? '');
}

/**
 * Version order: a leading `v` and build metadata (`+…`) ignored; the release parts compared numerically (missing
 * parts are 0, a non-numeric part after the numeric ones as text); then a version with a pre-release (`-rc.1`) before
 * the same version without one, pre-releases compared part by part (numbers below words, as semver).
 */
export function compareVersions(a: string, b: string): number {
  const [aMain, aPre] = split(a);
  const [bMain, bPre] = split(b);
  for (let i = 0; i < Math.max(aMain.length, bMain.length); i++) {
    const c = comparePart(aMain[i] ?? '0', bMain[i] ?? '0');
    if (c !== 0) return c;
  }
  if (aPre === bPre) return 0;
  if (aPre === undefined) return 1;
  if (bPre === undefined) return -1;
  const ap = aPre.split('.');
  const bp = bPre.split('.');
  for (let i = 0; i < Math.max(ap.length, bp.length); i++) {
    if (ap[i] === undefined) return -1;
    if (bp[i] === undefined) return 1;
    const c = comparePart(ap[i]!, bp[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

function split(version: string): [string[], string | undefined] {
  const bare = version.trim().replace(/^v/i, '').split('+')[0]!;
  const dash = bare.indexOf('-');
  const main = dash < 0 ? bare : bare.slice(0, dash);
  return [main.split('.'), dash < 0 ? undefined : bare.slice(dash + 1)];
}

function comparePart(a: string, b: string): number {
  const an = /^\d+$/.test(a);
  const bn = /^\d+$/.test(b);
  if (an && bn) {
    const d = BigInt(a) - BigInt(b);
    return d === 0n ? 0 : d > 0n ? 1 : -1;
  }
  if (an !== bn) return an ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
