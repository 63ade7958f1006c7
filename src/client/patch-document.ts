/**
 * The `-p`/`--patch-file` text of `outpost patch`, checked before anything is sent: it must parse (JSON, or YAML as
 * kubectl accepts), a strategic or merge patch must be an object, and a JSON patch (RFC 6902) an array of operations
 * each with a known `op`, a `path` and the fields its op needs. The CLI sends the patch re-encoded as JSON.
 */
import { parse } from 'yaml';

/** `--type` values, kubectl's names. */
export type PatchKind = 'strategic' | 'merge' | 'json';

/** Thrown for a patch that could never apply; the message says what is wrong (the CLI exits 2). */
export class PatchDocumentError extends Error {}

const OPS_NEEDING_VALUE = new Set(['add', 'replace', 'test']);
const OPS_NEEDING_FROM = new Set(['move', 'copy']);
const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses and checks `text` as a patch of `type`; returns it as compact JSON. Throws {@link PatchDocumentError} with a
 * kubectl-like message naming the problem (and, for a JSON patch, the index of the bad operation).
 */
export function checkPatchDocument(text: string, type: PatchKind): string {
  if (!text.trim()) throw new PatchDocumentError('the patch is empty');
  let value: unknown;
  try {
    value = parse(text);
  } catch (err) {
    // The parser's first line ends in a colon that introduces the source excerpt this message leaves out.
    const first = (err as Error).message.split('\n')[0]!.replace(/:\s*$/, '');
    throw new PatchDocumentError(`unable to parse "${abbreviate(text)}": ${first}`);
  }
  if (type !== 'json') {
    if (!isObject(value)) {
      throw new PatchDocumentError(`a ${type} patch must be a JSON object, e.g. {"spec":{"replicas":2}} (got ${describe(value)})`);
    }
    return JSON.stringify(value);
  }
  if (!Array.isArray(value)) {
    throw new PatchDocumentError(
      `a json patch must be a JSON array of operations, e.g. [{"op":"replace","path":"/spec/replicas","value":2}] (got ${describe(value)})`,
    );
  }
  if (value.length === 0) throw new PatchDocumentError('the json patch has no operations');
  value.forEach((op, i) => {
    if (!isObject(op)) throw new PatchDocumentError(`json patch operation ${i}: must be an object (got ${describe(op)})`);
    if (typeof op.op !== 'string' || !OPS.has(op.op)) {
      throw new PatchDocumentError(
        `json patch operation ${i}: "op" must be one of ${[...OPS].join(', ')} (got ${JSON.stringify(op.op ?? null)})`,
      );
    }
    if (typeof op.path !== 'string' || (op.path !== '' && !op.path.startsWith('/'))) {
      throw new PatchDocumentError(`json patch operation ${i}: "path" must be a JSON pointer such as "/spec/replicas"`);
    }
    if (OPS_NEEDING_VALUE.has(op.op) && !('value' in op))
      throw new PatchDocumentError(`json patch operation ${i}: "${op.op}" needs a "value"`);
    if (OPS_NEEDING_FROM.has(op.op) && typeof op.from !== 'string') {
      throw new PatchDocumentError(`json patch operation ${i}: "${op.op}" needs a "from" path`);
    }
  });
  return JSON.stringify(value);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function abbreviate(text: string): string {
  const line = text.trim().replace(/\s+/g, ' ');
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}
