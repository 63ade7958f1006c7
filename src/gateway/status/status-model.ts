/**
 * The four conditions Clouddriver reports for every Kubernetes object (stable, paused, available, failed) and the
 * few ways its rules build them, plus the tolerant readers the per-kind rules share. Rules read live objects as plain
 * JSON: a missing or mistyped field counts as absent, as Clouddriver's typed models make it (counts absent = 0).
 */

/** One condition: its state and, when a rule set it, why (`null` otherwise, as Clouddriver sends it). */
interface StatusCondition {
  state: boolean;
  message: string | null;
}

/** Clouddriver's status of an object; Orca reads `stable` and `failed`, Deck also shows `paused` and `available`. */
export interface ManifestStatus {
  stable: StatusCondition;
  paused: StatusCondition;
  available: StatusCondition;
  failed: StatusCondition;
}

/** The stable message of an object that has no `.status` yet. */
export const NO_STATUS_MESSAGE = 'No status reported yet';
/** The available message of an object that has no `.status` yet. */
const NO_AVAILABILITY_MESSAGE = 'No availability reported';
/** Shared by the controllers whose status lags their spec (Deployment, StatefulSet, DaemonSet). */
export const OLD_GENERATION_MESSAGE = 'Waiting for status generation to match updated object generation';

/** Stable, not paused, available, not failed: what every kind without rules reports. A fresh object each call. */
export function defaultStatus(): ManifestStatus {
  return {
    stable: { state: true, message: null },
    paused: { state: false, message: null },
    available: { state: true, message: null },
    failed: { state: false, message: null },
  };
}

/** The status of an object whose `.status` is absent: unstable and unavailable. */
export function noStatusReported(): ManifestStatus {
  return unavailableStatus(NO_STATUS_MESSAGE, NO_AVAILABILITY_MESSAGE);
}

/** Default but not stable, for `message`. */
export function unstableStatus(message: string | null): ManifestStatus {
  const status = defaultStatus();
  status.stable = { state: false, message };
  return status;
}

/** Default but neither stable nor available (the second message defaults to the first). */
export function unavailableStatus(message: string | null, availableMessage: string | null = message): ManifestStatus {
  const status = unstableStatus(message);
  status.available = { state: false, message: availableMessage };
  return status;
}

/** Default and explicitly stable with a message (StatefulSet's "Partitioned roll out complete"). */
export function stableStatus(message: string): ManifestStatus {
  const status = defaultStatus();
  status.stable = { state: true, message };
  return status;
}

/** Default but failed, for `message`; `stable` is left alone, as Clouddriver leaves it. */
export function failedStatus(message: string | null): ManifestStatus {
  const status = defaultStatus();
  status.failed = { state: true, message };
  return status;
}

/** A JSON object, or undefined for anything else (null, arrays, scalars). */
export function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The objects of a JSON array (conditions); anything else is empty. */
export function records(value: unknown): Record<string, unknown>[] {
  if (!Array.isArray(value)) return [];
  return value.map(record).filter((item): item is Record<string, unknown> => item !== undefined);
}

/** A number field, or undefined when absent or not a number. */
export function numberField(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A count field with absent = 0, as Clouddriver unboxes them. */
export function count(value: unknown): number {
  return numberField(value) ?? 0;
}

/** A string field, or undefined. */
export function stringField(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Case-insensitive equality of a string field with a constant (Clouddriver compares types and reasons so). */
export function sameText(value: unknown, expected: string): boolean {
  return typeof value === 'string' && value.toLowerCase() === expected.toLowerCase();
}

/**
 * True when the controller has observed the object's current spec: `status.observedGeneration` is present and equals
 * `metadata.generation`. An object without `metadata.generation` never matches.
 */
export function generationMatches(object: Record<string, unknown>, status: Record<string, unknown>): boolean {
  const observed = numberField(status.observedGeneration);
  return observed !== undefined && observed === numberField(record(object.metadata)?.generation);
}
