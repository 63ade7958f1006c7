/**
 * PATCH bodies by content type: JSON patch, merge patch, strategic merge patch and server-side apply, each delegated
 * to the patch module. Unknown content types are 415; patch failures carry their own code (400/409/422).
 */
import { applyJsonPatch, applyMergePatch, applyServerSideApply, applyStrategicMergePatch, PatchError } from '../patch/index.js';
import { ApiError, errors } from '../errors.js';
import { isPlainObject } from '../types.js';
import { decodeJson, decodeYaml, mediaType } from './io.js';

/** The four patch types the server accepts. */
export type PatchKind = 'json' | 'merge' | 'strategic' | 'apply';

/** Maps a PATCH Content-Type to its patch kind; 415 otherwise. */
export function patchKindOf(contentType: string | undefined): PatchKind {
  switch (mediaType(contentType)) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
      return 'apply';
    default:
      throw new ApiError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
      );
  }
}

/** Decodes the patch document itself (JSON, or YAML for apply). */
export function decodePatch(kind: PatchKind, body: Buffer): unknown {
  const doc = kind === 'apply' ? decodeYaml(body) : decodeJson(body);
  if (kind === 'json' ? !Array.isArray(doc) : !isPlainObject(doc)) {
    throw errors.badRequest(kind === 'json' ? 'json patch must be an array of operations' : 'the patch must be a JSON object');
  }
  return doc;
}

function wrap<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof PatchError) {
      const status = err.status;
      if (status === 409) throw new ApiError(409, 'Conflict', err.message);
      if (status === 422) throw new ApiError(422, 'Invalid', err.message);
      throw new ApiError(400, 'BadRequest', err.message);
    }
    if (err instanceof ApiError) throw err;
    throw errors.badRequest((err as Error).message);
  }
}

/** Applies a non-apply patch to `live`, returning the patched object. */
export function applyPatch(
  kind: Exclude<PatchKind, 'apply'>,
  live: Record<string, unknown>,
  patch: unknown,
  kindKey: string,
): Record<string, unknown> {
  return wrap(() => {
    if (kind === 'json') return applyJsonPatch(live, patch);
    if (kind === 'merge') return applyMergePatch(live, patch);
    return applyStrategicMergePatch(live, patch, kindKey);
  });
}

/** Server-side apply of `applied` onto `live` (undefined: the object does not exist yet). */
export function applyApply(
  live: Record<string, unknown> | undefined,
  applied: Record<string, unknown>,
  opts: { fieldManager: string; force: boolean; kindKey: string },
): Record<string, unknown> {
  return wrap(() => applyServerSideApply(live, applied, opts));
}
