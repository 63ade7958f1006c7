/**
 * The Kubernetes Events about one object, in the order Clouddriver returns them on `GET /manifests/...`
 * (`events`, when `includeEvents` is on): oldest first by `lastTimestamp`, else `firstTimestamp`, as Clouddriver
 * sorts them. Pure: the caller lists the namespace's core/v1 Events and passes them in.
 */

type Json = Record<string, unknown>;

function recordOf(value: unknown): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * True when `event` is about `object`. When both carry a uid the uids decide, so Events of an earlier object with
 * the same name (deleted and re-created) are left out; otherwise kind, name and namespace must all be equal (kind
 * exactly, as a field selector compares it; a missing namespace is '' on both sides, for cluster-scoped objects).
 */
function isAbout(event: Json, object: Json): boolean {
  const involved = recordOf(event.involvedObject);
  const metadata = recordOf(object.metadata);
  const objectUid = nonEmpty(metadata.uid);
  const eventUid = nonEmpty(involved.uid);
  if (objectUid !== undefined && eventUid !== undefined) return objectUid === eventUid;
  return (
    textOf(involved.kind) === textOf(object.kind) &&
    textOf(involved.name) === textOf(metadata.name) &&
    textOf(involved.namespace) === textOf(metadata.namespace)
  );
}

/**
 * Clouddriver's sort key: `lastTimestamp` when the field is present — even when it is null, so `firstTimestamp` is
 * only read when `lastTimestamp` is absent — else `firstTimestamp`, else the text "n/a". Null (and any non-string)
 * keys sort last; "n/a" sorts after every timestamp because it is compared as text.
 */
function sortKey(event: Json): string | null {
  const value = Object.hasOwn(event, 'lastTimestamp')
    ? event.lastTimestamp
    : Object.hasOwn(event, 'firstTimestamp')
      ? event.firstTimestamp
      : 'n/a';
  return typeof value === 'string' ? value : null;
}

function compareKeys(a: string | null, b: string | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The Events among `events` whose `involvedObject` is `object`, sorted ascending by Clouddriver's key (text order,
 * which is time order for the API server's RFC 3339 timestamps). The sort is stable: Events with equal keys keep the
 * order they were given in. `eventTime` is not looked at, as Clouddriver does not. Returns a new array holding the
 * given Event objects (not copies); the input is not modified.
 */
export function eventsFor(object: Record<string, unknown>, events: Record<string, unknown>[]): Record<string, unknown>[] {
  return events
    .filter((event) => isAbout(recordOf(event), object))
    .map((event) => ({ event, key: sortKey(recordOf(event)) }))
    .sort((a, b) => compareKeys(a.key, b.key))
    .map(({ event }) => event);
}
