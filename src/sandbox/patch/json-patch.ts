/**
 * JSON patch (RFC 6902), `application/json-patch+json`, through `fast-json-patch`. The patch is validated as a whole
 * before anything is applied, and applied to a deep copy, so a failing operation changes nothing.
 */
import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { PatchError, cloneJson, isObject } from './errors.js';

/** fast-json-patch error names for a well-formed patch that does not fit the document. */
const UNPROCESSABLE = new Set([
  'TEST_OPERATION_FAILED',
  'OPERATION_PATH_UNRESOLVABLE',
  'OPERATION_FROM_UNRESOLVABLE',
  'OPERATION_VALUE_OUT_OF_BOUNDS',
  'OPERATION_PATH_ILLEGAL_ARRAY_INDEX',
  'OPERATION_PATH_CANNOT_ADD',
]);

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

function validateOperations(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) throw new PatchError(400, 'json patch must be a JSON array of operations');
  patch.forEach((op, i) => {
    if (!isObject(op)) throw new PatchError(400, `json patch operation ${i} must be an object`);
    if (typeof op.op !== 'string' || !OPS.has(op.op)) {
      throw new PatchError(400, `json patch operation ${i}: unknown op ${JSON.stringify(op.op)}`);
    }
    if (typeof op.path !== 'string' || (op.path !== '' && !op.path.startsWith('/'))) {
      throw new PatchError(400, `json patch operation ${i} (${op.op}): "path" must be a JSON pointer string`);
    }
    if ((op.op === 'add' || op.op === 'replace' || op.op === 'test') && !('value' in op)) {
      throw new PatchError(400, `json patch operation ${i} (${op.op}): missing "value"`);
    }
    if ((op.op === 'move' || op.op === 'copy') && (typeof op.from !== 'string' || (op.from !== '' && !op.from.startsWith('/')))) {
      throw new PatchError(400, `json patch operation ${i} (${op.op}): "from" must be a JSON pointer string`);
    }
  });
  return patch as Operation[];
}

/**
 * Applies an RFC 6902 patch to a copy of `target` and returns the result; `target` is never mutated.
 * Malformed patches are 400; a failed `test`, a missing path or a result that is not an object is 422.
 */
export function applyJsonPatch(target: object, patch: unknown): Record<string, unknown> {
  const ops = validateOperations(patch);
  const doc = cloneJson(target);
  let result: unknown;
  try {
    // validate=true makes fast-json-patch check each op against the document before applying it
    result = fastJsonPatch.applyPatch(doc, cloneJson(ops), true, true, true).newDocument;
  } catch (err) {
    const e = err as { name?: string; message?: string; index?: number; operation?: { op?: string; path?: string } };
    const first = (e.message ?? String(err)).split('\n')[0];
    const where = e.operation ? ` (${e.operation.op} ${e.operation.path})` : '';
    const status = e.name && UNPROCESSABLE.has(e.name) ? 422 : 400;
    throw new PatchError(status, `json patch operation ${e.index ?? '?'}${where} failed: ${first}`);
  }
  if (!isObject(result)) throw new PatchError(422, 'json patch result must be a JSON object');
  return result;
}
