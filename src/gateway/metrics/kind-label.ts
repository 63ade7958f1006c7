/**
 * The `kind` label of the events-ingested counter. Kinds come from agents, which may send any string, and every new
 * label value is a series the registry keeps until the gateway stops: an agent streaming events of ever new kinds
 * (or of kinds thousands of characters long) would grow the gateway's memory without bound. So a kind that is not a
 * Kubernetes kind name, and every kind past the first {@link MAX_KIND_LABELS}, is counted under `other`.
 */

/** Distinct kinds the counter keeps a series for; far more than the kinds (CRDs included) of a real fleet. */
export const MAX_KIND_LABELS = 500;

/** The label of kinds beyond the limit or not shaped like a kind. */
const OTHER_KIND_LABEL = 'other';

/** A Kubernetes kind: a letter, then letters, digits and dashes, at most 63 characters (as a CRD's names.kind). */
const KIND_NAME = /^[A-Za-z](?:[-A-Za-z0-9]{0,61}[A-Za-z0-9])?$/;

/** Maps kinds to labels; one per metrics registry. The first {@link MAX_KIND_LABELS} well-formed kinds keep their name. */
export function createKindLabels(max = MAX_KIND_LABELS): (kind: string) => string {
  const seen = new Set<string>();
  return (kind) => {
    if (seen.has(kind)) return kind;
    if (seen.size >= max || !KIND_NAME.test(kind)) return OTHER_KIND_LABEL;
    seen.add(kind);
    return kind;
  };
}
