/**
 * The one error type of the patch module. `status` is the HTTP code the API server must answer with, so callers map
 * it to a Kubernetes `Status` without inspecting messages.
 */

/** One field-manager conflict of a server-side apply (what Kubernetes reports as a `FieldManagerConflict` cause). */
export interface ApplyConflict {
  /** The manager that owns the field, e.g. `kubectl`. */
  manager: string;
  /** Kubernetes-style path, e.g. `.spec.replicas` or `.spec.template.spec.containers[name="web"].image`. */
  field: string;
  /** `conflict with "kubectl" using apps/v1` — the per-cause message Kubernetes uses. */
  message: string;
}

/**
 * Thrown for every patch failure; nothing is changed when it is thrown.
 * - 400: the patch document itself is malformed (wrong shape, unknown op, bad directive).
 * - 409: server-side apply conflicts with another manager's fields and `force` was not set (see `conflicts`).
 * - 422: the patch is well-formed but cannot be applied (JSON-patch `test` failed, path missing, invalid result).
 */
export class PatchError extends Error {
  /** HTTP status: 400, 409 or 422. */
  readonly status: number;
  /** For 409 only: the conflicting fields, in the order Kubernetes lists them. */
  readonly conflicts: ApplyConflict[];

  constructor(status: number, message: string, conflicts: ApplyConflict[] = []) {
    super(message);
    this.name = 'PatchError';
    this.status = status;
    this.conflicts = conflicts;
  }
}

/** A JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Deep copy of plain JSON data; the patch functions never hand out or mutate caller-owned objects. */
export function cloneJson<T>(v: T): T {
  return v === undefined ? v : (structuredClone(v) as T);
}
