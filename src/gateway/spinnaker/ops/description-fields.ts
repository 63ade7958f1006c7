/**
 * Reading Orca's operation descriptions: they are the whole stage context plus a few keys, so only the fields an
 * operation binds are read and everything else is ignored. Fields arrive as Jackson would accept them (a number as a
 * string, a boolean as "true"); a field that cannot be read is a 400 naming it — before any task is created.
 */
import { HttpError } from '../../http/errors.js';
import { parseResourceName, type ResourceName } from '../../status/kind-names.js';

/** A description: one value of Orca's `[{"<operation>": {...}}]` array. */
export type Description = Record<string, unknown>;

/** A 400 in Spring's error shape (the route's error mapping renders it). */
export function badDescription(message: string): HttpError {
  return new HttpError(400, 'Bad Request', message);
}

/** The account: `account`, else `credentials` (as Clouddriver's converter helper). */
export function accountOf(description: Description): string {
  for (const key of ['account', 'credentials']) {
    const value = description[key];
    if (typeof value === 'string' && value.trim()) return value.trim();
  }
  throw badDescription('account is required (the description has neither "account" nor "credentials")');
}

/** An optional string field (numbers and booleans are accepted as their text). */
export function stringField(description: Description, key: string): string | undefined {
  const value = description[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw badDescription(`${key} must be a string (got ${typeof value})`);
}

/** An optional integer field; numeric strings are accepted. */
export function intField(description: Description, key: string): number | undefined {
  const value = description[key];
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw badDescription(`${key} must be an integer (got ${JSON.stringify(value)})`);
  return n;
}

/** A namespace from a `location`: '' for cluster-scoped objects (`_` or empty). */
export function namespaceOfLocation(location: string | undefined): string {
  return !location || location === '_' ? '' : location;
}

/** The target of a single-object operation: `manifestName` ("kind name") and `location`. */
export interface ManifestTarget extends ResourceName {
  namespace: string;
  /** "kind name" in Spinnaker's spelling (`deployment web`). */
  fullName: string;
}

/** Reads `manifestName` and `location`; 400 when the name is not "kind name". */
export function manifestTarget(description: Description): ManifestTarget {
  const text = stringField(description, 'manifestName');
  if (!text) throw badDescription('manifestName is required ("<kind> <name>", e.g. "deployment web")');
  const parsed = parseResourceName(text);
  if (!parsed) throw badDescription(`manifestName ${JSON.stringify(text)} is not "<kind> <name>" (e.g. "deployment web")`);
  return {
    ...parsed,
    namespace: namespaceOfLocation(stringField(description, 'location')),
    fullName: `${parsed.kind.spinnakerName} ${parsed.name}`,
  };
}
