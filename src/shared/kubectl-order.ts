/**
 * Kubernetes objects in the order the API server writes their top level (its Go types' field order: `apiVersion`,
 * `kind`, `metadata`, `spec`, the rest in their own order, `status` last), for the dashboard's YAML view. Only the top
 * level is reordered: nested fields keep the order the API server gave them. (Despite the name, kubectl itself prints
 * every level's keys sorted; `outpost get -o yaml|json` prints kubectl's bytes: src/client/kubectl-yaml.ts.)
 */

const FIRST = ['apiVersion', 'kind', 'metadata', 'spec'];

/** A copy of `object` with its top-level keys in kubectl's order; anything that is not a plain object is returned as is. */
export function inKubectlOrder<T>(object: T): T {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return object;
  const source = object as Record<string, unknown>;
  const ordered: Record<string, unknown> = {};
  for (const key of FIRST) if (key in source) ordered[key] = source[key];
  for (const [key, value] of Object.entries(source)) if (!FIRST.includes(key) && key !== 'status') ordered[key] = value;
  if ('status' in source) ordered.status = source.status;
  // A List's items are objects too.
  if (Array.isArray(ordered.items)) ordered.items = ordered.items.map((item) => inKubectlOrder(item));
  return ordered as T;
}
