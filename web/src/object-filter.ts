import { resolveKind } from '../../src/shared/kind-names.js';

/** The Objects page's filter, as kept in the hash query (`#/objects?account=&kind=&namespace=&labels=`). */
export interface ObjectFilter {
  account: string;
  kind: string;
  namespace: string;
  /** Kubernetes label selector, passed through to ListObjects. */
  labels: string;
}

/**
 * Reads the filter from the hash query; missing parameters are empty (no restriction). A kind written the kubectl
 * way in a hand-made link (`kind=deploy`) is read as its Kind; an unknown one is kept for the server to refuse.
 */
export function readObjectFilter(query: URLSearchParams): ObjectFilter {
  return {
    account: query.get('account') ?? '',
    kind: kindOf(query.get('kind') ?? ''),
    namespace: query.get('namespace') ?? '',
    labels: query.get('labels') ?? '',
  };
}

/** A stable string for the filter, used as the query key (a new key starts a fresh list). */
export function objectFilterKey(f: ObjectFilter): string {
  return JSON.stringify([f.account, f.kind, f.namespace, f.labels]);
}

/** `${account}/${kind}/${namespace}/${name}`: the row identity the page and its tests use (data-key). */
export function objectKey(o: { account: string; kind: string; namespace: string; name: string }): string {
  return `${o.account}/${o.kind}/${o.namespace}/${o.name}`;
}

function kindOf(text: string): string {
  if (text.trim() === '') return '';
  try {
    return resolveKind(text).kind;
  } catch {
    return text;
  }
}
