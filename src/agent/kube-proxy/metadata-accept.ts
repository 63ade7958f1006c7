/**
 * The metadata-only alternatives of a caller's `Accept` header, for a read of Secrets under `kubeProxy.secrets: deny`
 * (docs/kubectl.md, "Secrets"). kube-apiserver answers with the first alternative it can produce and falls back to the
 * next one when it cannot — down to a plain `application/json`, the whole object, values included; in a watch it even
 * sends the whole object when it cannot convert one. So the agent keeps only the alternatives that cannot carry
 * values and sends them, written canonically, in place of the caller's header: a Table whose rows hold no object or
 * only its metadata (`includeObject` absent, `None` or `Metadata`, the server's default being `Metadata`), or
 * `PartialObjectMetadata` (one object, a watch's events) / `PartialObjectMetadataList` (a list). JSON only: the
 * agent checks the answer before it goes back (secret-answer.ts), which it can do for JSON.
 */

/** What the read returns: one object, a list, or a watch's events. */
export type ReadShape = 'get' | 'list' | 'watch';

/** The conversions kube-apiserver can apply to each shape without failing over to the object. */
const VIEWS: Record<ReadShape, readonly string[]> = {
  get: ['Table', 'PartialObjectMetadata'],
  list: ['Table', 'PartialObjectMetadataList'],
  watch: ['Table', 'PartialObjectMetadata'],
};

const META_VERSIONS = new Set<string | undefined>(['v1', 'v1beta1']);
/** `includeObject` values whose Table rows carry no Secret values ('' is the server's default, Metadata). */
const TABLE_INCLUDE = new Set(['', 'None', 'Metadata']);

/** One Accept alternative's parameters; undefined when a parameter is repeated (which one wins is not ours to guess). */
function parameters(parts: readonly string[]): Map<string, string> | undefined {
  const out = new Map<string, string>();
  for (const part of parts) {
    const at = part.indexOf('=');
    const key = (at < 0 ? part : part.slice(0, at)).trim();
    if (key === '') continue;
    if (out.has(key)) return undefined;
    // A parameter without `=` gets itself as its value: no such value makes an alternative metadata-only.
    out.set(key, part.slice(at + 1).trim());
  }
  return out;
}

/**
 * The Accept value to send for a read of Secrets of `shape`: the metadata-only alternatives among the caller's
 * `accept` header values, in the caller's order, canonically written (`application/json;as=Table;v=v1;g=meta.k8s.io`);
 * '' when the caller asked for none, which means it wants the objects. Table alternatives count only when every
 * `includeObject` value of `query` is one that keeps values out of the rows.
 */
export function metadataAccept(accept: readonly string[], shape: ReadShape, query: URLSearchParams): string {
  const tableAllowed = query.getAll('includeObject').every((value) => TABLE_INCLUDE.has(value));
  const kept: string[] = [];
  for (const alternative of accept.join(',').split(',')) {
    const [type, ...rest] = alternative.split(';') as [string, ...string[]];
    if (type.trim().toLowerCase() !== 'application/json') continue;
    const params = parameters(rest);
    if (!params) continue;
    const as = params.get('as');
    const version = params.get('v');
    if (!as || !VIEWS[shape].includes(as) || params.get('g') !== 'meta.k8s.io' || !META_VERSIONS.has(version)) continue;
    if (as === 'Table' && !tableAllowed) continue;
    const canonical = `application/json;as=${as};v=${version};g=meta.k8s.io`;
    if (!kept.includes(canonical)) kept.push(canonical);
  }
  return kept.join(',');
}
