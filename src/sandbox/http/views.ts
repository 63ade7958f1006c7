/**
 * The representations of a read that an `Accept` header asks for, negotiated as kube-apiserver does: the first
 * alternative the server can produce wins — a `meta.k8s.io` (v1, v1beta1) Table (JSON), `PartialObjectMetadata` or
 * `PartialObjectMetadataList` (JSON or protobuf; the sandbox answers JSON), or the object itself for an alternative
 * without `as` — and when none can be produced the answer is 406. Which view fits which read is the handler's
 * business (objects.ts, watch.ts): a `PartialObjectMetadata` of a list is 406, and so is a
 * `PartialObjectMetadataList` of one object; a watch that cannot convert its objects sends them whole, as
 * kube-apiserver does.
 */
import { ApiError, errors } from '../errors.js';
import type { KubeObject } from '../types.js';

/** A negotiated representation. */
export type View = { as: 'object' } | { as: 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList'; version: string };

const META_VERSIONS = new Set(['v1', 'v1beta1']);
const INCLUDE_OBJECT = new Set(['', 'None', 'Metadata', 'Object']);

/** The view `accept` asks for; throws 406 when it names only conversions the server cannot make. */
export function negotiateView(accept: string | undefined): View {
  if (!accept || accept.trim() === '') return { as: 'object' };
  for (const alternative of accept.split(',')) {
    const [type = '', ...rest] = alternative.split(';').map((part) => part.trim());
    const params = new Map(rest.map((part) => [part.split('=')[0]!.trim(), part.slice(part.indexOf('=') + 1).trim()] as const));
    const as = params.get('as');
    if (as === undefined) return { as: 'object' };
    const version = params.get('v') ?? '';
    if (params.get('g') !== 'meta.k8s.io' || !META_VERSIONS.has(version)) continue;
    const mediaType = type.toLowerCase();
    if (as === 'Table' && mediaType === 'application/json') return { as, version };
    if (
      (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') &&
      (mediaType === 'application/json' || mediaType === 'application/vnd.kubernetes.protobuf')
    ) {
      return { as, version };
    }
  }
  throw new ApiError(406, 'NotAcceptable', 'only the following media types are accepted: application/json, application/yaml');
}

/** The `includeObject` of a Table read; 400 for a value kube-apiserver does not know. */
export function includeObjectOf(query: URLSearchParams): string {
  const value = query.get('includeObject') ?? '';
  if (!INCLUDE_OBJECT.has(value)) {
    throw errors.badRequest(
      `Unable to convert to Table as requested: includeObject: Unsupported value: ${JSON.stringify(value)}: supported values: "Metadata", "None", "Object"`,
    );
  }
  return value;
}

/** A 406 for a view that does not fit the read (kube-apiserver's wording). */
export function viewMismatch(view: View, what: string): ApiError {
  return new ApiError(406, 'NotAcceptable', `you requested ${view.as}, but the requested object is ${what}`);
}

/** The object's metadata only, as `PartialObjectMetadata` of `meta.k8s.io/{version}`. */
export function partialOf(obj: KubeObject, version = 'v1'): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

/** A `PartialObjectMetadataList` of `items` with the list's metadata. */
export function partialListOf(items: KubeObject[], listMeta: Record<string, unknown>, version: string): Record<string, unknown> {
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: listMeta,
    items: items.map((obj) => partialOf(obj, version)),
  };
}
