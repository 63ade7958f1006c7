/**
 * Defence in depth for operation results: the agent removes Secret data from the objects it returns, and the gateway
 * removes it again before a result is stored, as it does for watch events — so a result never holds Secret values,
 * whatever an agent (an old one, a buggy one, a hostile one) sent.
 */
import { removeSecretMaterial } from '../../shared/secret-scrub.js';

/** The kind an operation's request names (get, list, patch, …), or '' when it names none. */
export function requestKind(request: Record<string, unknown> | undefined): string {
  if (!request) return '';
  for (const spec of ['get', 'list', 'patch', 'scale', 'rollout', 'delete']) {
    const kind = (request[spec] as { kind?: unknown } | undefined)?.kind;
    if (typeof kind === 'string') return kind;
  }
  return '';
}

/**
 * Removes Secret `data`, `stringData` and the last-applied annotation from the result's objects (protobuf JSON of an
 * OperationResult), in place: objects whose kind is Secret, objects without a kind of a request for Secrets, and the
 * items of a `List`. Returns how many objects it changed.
 */
export function scrubResultSecrets(result: Record<string, unknown>, kind: string): number {
  const objects = result.objects;
  if (!Array.isArray(objects)) return 0;
  let scrubbed = 0;
  const visit = (object: unknown) => {
    if (typeof object !== 'object' || object === null) return;
    const record = object as Record<string, unknown>;
    if (Array.isArray(record.items)) for (const item of record.items) visit(item);
    const own = typeof record.kind === 'string' ? record.kind : kind;
    if (own === 'Secret' && removeSecretMaterial(record)) scrubbed++;
  };
  for (const object of objects) visit(object);
  return scrubbed;
}
