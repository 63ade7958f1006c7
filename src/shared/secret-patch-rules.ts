/**
 * Which JSON patches (`application/json-patch+json`, RFC 6902) of a Secret may run where its values must not come
 * back. A JSON patch can read as well as write: `copy` and `move` take a value `from` a location and put it anywhere
 * (an annotation, the name — whose 422 message then quotes it), and `test` answers whether a location holds a guessed
 * value. Such an operation reading a Secret's values — `/data`, `/stringData`, kubectl's last-applied annotation
 * (it repeats them), or any ancestor of those, the whole object included — would hand the values to whoever sent it.
 *
 * Pointers are read as leniently as the Kubernetes API server's JSON patch library does (what precedes the first `/`
 * is ignored, so `x/data/k` reads `/data/k`; a pointer without `/` is taken as the whole object) and compared
 * without regard to case, so a pointer that could reach a value in any reading is refused.
 */
import { LAST_APPLIED_ANNOTATION } from './secret-scrub.js';

/** Locations that hold a Secret's values (as JSON pointer tokens, lower-case). */
const SECRET_VALUE_LOCATIONS: readonly (readonly string[])[] = [
  ['data'],
  ['stringdata'],
  ['metadata', 'annotations', LAST_APPLIED_ANNOTATION.toLowerCase()],
];

/** The tokens of a JSON pointer (`~1` is `/`, `~0` is `~`), lower-cased; everything before the first `/` ignored. */
function pointerTokens(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~').toLowerCase());
}

/** True when `tokens` names a location holding Secret values, inside one, or an ancestor of one. */
function reachesSecretValues(tokens: readonly string[]): boolean {
  return SECRET_VALUE_LOCATIONS.some((location) => {
    const shared = Math.min(location.length, tokens.length);
    for (let i = 0; i < shared; i++) if (location[i] !== tokens[i]) return false;
    return true;
  });
}

/**
 * Why the JSON patch `ops` (the parsed request body) of a Secret may not run where the Secret's values must not
 * reach the caller, or undefined when it may. Refused: a body that is not an array of operation objects (nothing
 * can be checked), a `from` (in any operation; any spelling of the key) that is not a string or reaches Secret
 * values, and a `test` whose `path` reaches them. Writing operations (`add`, `replace`, `remove`) read nothing and
 * pass. The caller decides the object is a Secret and words the refusal (which setting, which object).
 */
export function secretPatchProblem(ops: unknown): string | undefined {
  if (!Array.isArray(ops)) return 'a JSON patch must be an array of operations';
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    if (op === null || typeof op !== 'object' || Array.isArray(op)) return `JSON patch operation ${i} is not an object`;
    const record = op as Record<string, unknown>;
    const name = typeof record.op === 'string' ? record.op.slice(0, 20) : '';
    for (const [key, value] of Object.entries(record)) {
      const lower = key.toLowerCase();
      const reads = lower === 'from' || (lower === 'path' && name.toLowerCase() === 'test');
      if (!reads) continue;
      if (typeof value !== 'string') return `JSON patch operation ${i} (${name || 'no op'}): "${key.slice(0, 20)}" is not a string`;
      if (reachesSecretValues(pointerTokens(value))) {
        const verb = lower === 'from' ? 'reads' : 'tests';
        return `JSON patch operation ${i} (${name || 'no op'}) ${verb} ${JSON.stringify(value.slice(0, 200))}, which holds or contains the Secret's values`;
      }
    }
  }
  return undefined;
}
