/**
 * The cluster's answers to requests on Secrets under `kubeProxy.secrets: deny`, checked before anything goes back
 * (docs/kubectl.md, "Secrets"). The request was already narrowed (secret-request.ts); the answer is still looked at,
 * because a server that cannot produce what was asked may answer with the whole object:
 *
 * - a metadata-only read may come back only as a Table whose rows hold no object or a `PartialObjectMetadata`, as
 *   `PartialObjectMetadata(List)`, as watch events carrying those, or as a `Status`; kubectl's last-applied
 *   annotation, which repeats the values, is removed from the metadata;
 * - the read of one Secret as an object is answered only when the cluster refused it (a `Status`: 404 tells
 *   `kubectl apply` the Secret is new); a success is replaced by the refusal;
 * - a write's answer (create, update, patch, delete: they happened) comes back without `data`, `stringData` and the
 *   last-applied annotation.
 *
 * Anything else — another content type, a compressed body, another kind, one value over the size bound — is cut: a
 * refusal when nothing went back yet, a broken-off connection otherwise. Never a placeholder in place of a value.
 */
import type { IncomingMessage } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import { removeSecretMaterial } from '../../shared/secret-scrub.js';
import { createJsonValuesTransform } from './json-values.js';

/** Largest JSON value (an answer, a watch event) or request body the agent holds to check (bytes). */
export const SECRET_BUFFER_BYTES = 8 * 1024 * 1024;

/** How an answer about Secrets is checked: see the module comment. */
export type SecretAnswerMode = 'metadata' | 'object' | 'write';

/**
 * What goes back: a refusal in place of the answer, or the body to send — `rewritten` when it is a checked copy (its
 * length is no longer the cluster's `content-length`).
 */
export type CheckedAnswer = { refusal: string; code: 'refused' | 'internal' } | { body: Readable; rewritten: boolean };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const PARTIAL_KEYS = new Set(['kind', 'apiVersion', 'metadata']);

/** A `PartialObjectMetadata`, nothing but metadata, without the last-applied annotation. */
function partial(value: unknown): Json {
  if (!isObject(value) || value.kind !== 'PartialObjectMetadata' || Object.keys(value).some((key) => !PARTIAL_KEYS.has(key))) {
    throw new Error('a Table row or list item that is not PartialObjectMetadata');
  }
  removeSecretMaterial(value);
  return value;
}

function metadataObject(value: unknown): Json {
  if (!isObject(value)) throw new Error('an answer that is not a JSON object');
  switch (value.kind) {
    case 'Status':
      return value;
    case 'PartialObjectMetadata':
      return partial(value);
    case 'PartialObjectMetadataList':
      if (!Array.isArray(value.items)) throw new Error('a PartialObjectMetadataList without items');
      value.items.forEach(partial);
      return value;
    case 'Table':
      if (!Array.isArray(value.rows)) throw new Error('a Table without rows');
      for (const row of value.rows) {
        if (!isObject(row)) throw new Error('a Table row that is not an object');
        if (row.object !== undefined && row.object !== null) partial(row.object);
      }
      return value;
    default:
      throw new Error(`an answer of kind ${JSON.stringify(String(value.kind)).slice(0, 80)} where only metadata may come back`);
  }
}

/** A watch event (`{type, object}`, no kind of its own). */
function isWatchEvent(value: unknown): value is { type: string; object: unknown } {
  return isObject(value) && typeof value.type === 'string' && 'object' in value && !('kind' in value);
}

/** One value of a metadata-only answer (a read's answer, a watch event, a Status), checked and scrubbed; throws. */
function metadataOnlyValue(value: unknown): unknown {
  if (isWatchEvent(value)) return { ...value, object: metadataObject(value.object) };
  return metadataObject(value);
}

/** One value of the answer to a write of a Secret, its values removed; throws for anything but a Secret or a Status. */
function writtenSecretValue(value: unknown): unknown {
  if (!isObject(value)) throw new Error('an answer that is not a JSON object');
  if (value.kind === 'Status') return value;
  if (value.kind === 'Secret') {
    removeSecretMaterial(value);
    return value;
  }
  if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) {
    for (const item of value.items) if (isObject(item)) removeSecretMaterial(item);
    return value;
  }
  throw new Error(`an answer of kind ${JSON.stringify(String(value.kind)).slice(0, 80)} to a write of a Secret`);
}

/** How each value of an answer is checked, by mode (a read of one Secret that did not succeed is checked as metadata). */
const VALUE_CHECKS: Record<SecretAnswerMode, (value: unknown) => unknown> = {
  metadata: metadataOnlyValue,
  object: metadataOnlyValue,
  write: writtenSecretValue,
};

/** True when the answer carries no body (HEAD, 204, an explicit zero length). */
function bodiless(method: string, res: IncomingMessage): boolean {
  return method === 'HEAD' || res.statusCode === 204 || res.statusCode === 304 || res.headers['content-length'] === '0';
}

/**
 * Checks the cluster's answer `res` to a request on Secrets (`method`, checked in `mode`) before its head goes back.
 * `objectRefusal` is what replaces a successful read of one Secret as an object. The returned body is the checked
 * answer; it errors (and the caller cuts the connection) when a later value breaks the rules.
 */
export function checkSecretAnswer(res: IncomingMessage, method: string, mode: SecretAnswerMode, objectRefusal: string): CheckedAnswer {
  const status = res.statusCode ?? 0;
  if (mode === 'object' && status >= 200 && status < 300) return { refusal: objectRefusal, code: 'refused' };
  const encoding = String(res.headers['content-encoding'] ?? 'identity').toLowerCase();
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (!bodiless(method, res)) {
    if (encoding !== 'identity') {
      return {
        refusal: `the cluster answered a request on Secrets with content-encoding "${encoding.slice(0, 40)}", which the agent cannot check`,
        code: 'internal',
      };
    }
    if (type !== 'application/json') {
      return {
        refusal: `the cluster answered a request on Secrets with "${type.slice(0, 80)}", which the agent cannot check for Secret values`,
        code: 'internal',
      };
    }
  }
  const body = createJsonValuesTransform(VALUE_CHECKS[mode], SECRET_BUFFER_BYTES);
  pipeline(res, body, () => {});
  return { body, rewritten: true };
}
