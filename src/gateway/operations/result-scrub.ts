/**
 * Defence in depth for operation results: the agent removes Secret data from the objects it returns, and the gateway
 * removes it again before a result is stored, as it does for watch events — so a result never holds Secret values,
 * whatever an agent (an old one, a buggy one, a hostile one) sent. Likewise both redact the request's Secret values
 * from a result's message.
 */
import { manifestSecretValues, patchSecretValues } from '../../shared/request-secret-values.js';
import { isSecretKind } from '../../shared/secret-kind.js';
import { removeSecretMaterial } from '../../shared/secret-scrub.js';
import { createSecretValueMatcher, REDACTED } from '../../shared/secret-values.js';
import { SEALED_KEY, type OperationSealer } from './operation-sealing.js';
import type { OperationRow } from './operation-store.js';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

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
 * OperationResult), in place: objects whose kind is Secret, objects without a kind of a request for Secrets (the kind
 * in any spelling), and the items of a `List`. Returns how many objects it changed.
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
    if (isSecretKind(own) && removeSecretMaterial(record)) scrubbed++;
  };
  for (const object of objects) visit(object);
  return scrubbed;
}

/**
 * Redacts, in the result's `message` (protobuf JSON of an OperationResult, in place), the Secret values the
 * operation's request carried (src/shared/request-secret-values.ts): a cluster that refuses a request may echo them
 * ("the name of the object (…) does not match", "Invalid value: …"), and the message is stored and shown in
 * plaintext where the request is sealed. Only rows whose request was sealed can hold such values; their sealed fields
 * are opened to know them. When they cannot be opened (the key left the key file) the whole message is replaced.
 * Returns true when it changed the message.
 */
export async function redactRequestValues(
  result: Record<string, unknown>,
  row: Pick<OperationRow, 'id' | 'account' | 'request'>,
  sealer: Pick<OperationSealer, 'open'>,
): Promise<boolean> {
  const message = result.message;
  if (typeof message !== 'string' || message === '' || !isRecord(row.request) || !(SEALED_KEY in row.request)) return false;
  let values: string[];
  try {
    const { spec } = await sealer.open(row);
    if (spec.case === 'apply') values = manifestSecretValues(spec.value.manifests);
    else if (spec.case === 'patch') values = patchSecretValues(spec.value.kind, spec.value.patch);
    else return false; // no other operation carries Secret values
  } catch {
    result.message = `${REDACTED} (the message of an operation that carried Secret values, which this replica cannot open to check it)`;
    return true;
  }
  const redacted = createSecretValueMatcher(values).redact(message);
  if (redacted === message) return false;
  result.message = redacted;
  return true;
}
