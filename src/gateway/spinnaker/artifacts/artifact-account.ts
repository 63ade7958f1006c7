/**
 * What an artifact account is to the routes (Clouddriver's `ArtifactCredentials`), and the kork `Artifact` a fetch
 * names (contract §4.1): camelCase JSON, unknown keys accepted and ignored, every field optional but `type` and
 * `artifactAccount` (checked by the route, with Clouddriver's statuses).
 */
import { badArtifact } from './artifact-errors.js';
import type { ArtifactBody } from './artifact-spool.js';

/** The fields of a kork Artifact the accounts read. */
export interface ArtifactRequest {
  type: string;
  name: string;
  version: string;
  location: string;
  reference: string;
  artifactAccount: string;
  metadata: Record<string, unknown>;
}

/** One artifact account. */
export interface ArtifactAccount {
  readonly name: string;
  /** The artifact types it lists (`GET /artifacts/credentials`). */
  readonly types: readonly string[];
  /** Clouddriver's credentials type (`artifacts-helm`…). */
  readonly type: string;
  /** True when it fetches artifacts of `type` (the embedded account also takes every `embedded/` and `remote/` type). */
  handles(type: string): boolean;
  /** The artifact's bytes, complete and within the size limit; errors are HttpErrors with a scrubbed message. */
  download(artifact: ArtifactRequest): Promise<ArtifactBody>;
  /** Helm only: the chart names of the index. */
  names?(): Promise<string[]>;
  /** Helm only: the versions of one chart. */
  versions?(chart: string): Promise<string[]>;
}

const text = (value: unknown, field: string): string => {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw badArtifact(`the artifact's ${field} must be a string`);
};

/**
 * The artifact of a fetch body; a 400 when the body is not a JSON object or a field has the wrong shape. Unknown keys
 * are ignored (kork folds them into `metadata`; no account reads them).
 */
export function parseArtifact(body: unknown): ArtifactRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badArtifact('the body must be a JSON artifact object');
  const b = body as Record<string, unknown>;
  const metadata = b.metadata;
  if (metadata !== undefined && metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata))) {
    throw badArtifact("the artifact's metadata must be an object");
  }
  return {
    type: text(b.type, 'type'),
    name: text(b.name, 'name'),
    version: text(b.version, 'version'),
    location: text(b.location, 'location'),
    reference: text(b.reference, 'reference'),
    artifactAccount: text(b.artifactAccount, 'artifactAccount'),
    metadata: (metadata as Record<string, unknown> | undefined) ?? {},
  };
}
