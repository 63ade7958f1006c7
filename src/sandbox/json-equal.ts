/**
 * Structural equality for plain JSON values, independent of key order. The store uses it to recognise no-op writes
 * (Kubernetes answers those without a new resourceVersion or watch event) and to decide generation bumps.
 */

/** True when `a` and `b` hold the same JSON value. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const aKeys = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bKeys = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (aKeys.length !== bKeys.length) return false;
  for (const key of aKeys) if (!jsonEqual(ao[key], bo[key])) return false;
  return true;
}

/** Equality of two objects ignoring the listed top-level keys. */
export function jsonEqualExcept(a: Record<string, unknown>, b: Record<string, unknown>, ignore: readonly string[]): boolean {
  const strip = (o: Record<string, unknown>) => {
    const copy: Record<string, unknown> = { ...o };
    for (const key of ignore) delete copy[key];
    return copy;
  };
  return jsonEqual(strip(a), strip(b));
}
