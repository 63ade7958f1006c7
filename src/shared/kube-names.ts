/**
 * Which Kubernetes user and group names kubectl through the gateway may impersonate (docs/kubectl.md, "Identity
 * mapping"), checked by the gateway when it maps a caller and again by the agent before it sets `Impersonate-User`
 * and `Impersonate-Group`. A name travels in an HTTP header, and the cluster's HTTP parser trims the spaces and tabs
 * around a header value: `" system:masters"` arrives as `system:masters`. So a name must be one an HTTP header carries
 * verbatim — printable ASCII, no whitespace at either end — and the reserved `system:` namespace is recognised after
 * the same trimming. Kubernetes compares names byte for byte (RBAC subjects, the `system:masters` group), so
 * `System:masters` is another, unprivileged name, and case is not folded here either.
 */

/** The cluster's reserved namespace of users and groups. */
const SYSTEM_PREFIX = 'system:';

/** Why `name` cannot be impersonated as it is, or undefined when it can. */
export function kubeNameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'holds a control character';
  if (/[^\u0020-\u007e]/.test(name)) return 'holds a character outside printable ASCII, which an HTTP header cannot carry verbatim';
  if (name.trim() !== name) return "starts or ends with whitespace, which the cluster's HTTP parser trims";
  return undefined;
}

/** True for a name in the cluster's `system:` namespace, as the cluster reads it (surrounding whitespace trimmed). */
export function isSystemName(name: string): boolean {
  return name.trim().startsWith(SYSTEM_PREFIX);
}

/** Why `name` may not be impersonated for a caller (a bad name, or a `system:` one), or undefined when it may. */
export function callerNameProblem(name: string): string | undefined {
  const problem = kubeNameProblem(name);
  if (problem) return problem;
  if (isSystemName(name)) return "is in the cluster's reserved system: namespace";
  return undefined;
}
