import { hrefFor } from './router.js';

/** Stands for "no namespace" in an object's URL (cluster-scoped kinds); namespaces are DNS labels, never "_". */
const CLUSTER = '_';

/** Identifies one cached object: what GetObject needs and what the object page's URL carries. */
export interface ObjectRef {
  account: string;
  kind: string;
  /** '' for cluster-scoped objects. */
  namespace: string;
  name: string;
}

/** The object page's URL: `#/objects/{account}/{kind}/{namespace or _}/{name}` — shareable, back/forward work. */
export function objectHref(ref: ObjectRef): string {
  const parts = [ref.account, ref.kind, ref.namespace || CLUSTER, ref.name].map(encodeURIComponent);
  return hrefFor(`objects/${parts.join('/')}`);
}

/** Reads an object reference from the route's params after `objects/`; undefined unless all four are there. */
export function readObjectRef(params: readonly string[]): ObjectRef | undefined {
  if (params.length !== 4 || params.some((p) => p === '')) return undefined;
  const [account, kind, namespace, name] = params as [string, string, string, string];
  return { account, kind, namespace: namespace === CLUSTER ? '' : namespace, name };
}

/** "Deployment demo/web" or "Namespace demo". */
export function objectTitle(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}
