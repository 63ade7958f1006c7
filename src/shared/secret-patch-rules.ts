/**
 * The Secret rule for JSON patches (RFC 6902): a patch of a Secret may not read the Secret's values. `copy` and `move`
 * read the value at `from` and write it at `path` — into an annotation, a label, the name — where no scrub looks for
 * it, or where the cluster's refusal echoes it ("Invalid value: …"); `test` reads the value at `path` and answers
 * whether a guess was right. A read is refused when its pointer is `/data`, `/stringData` or the kubectl last-applied
 * annotation (which repeats them), anything below one of them, or an ancestor of one (the root `""` is the whole
 * object, `/metadata` holds the annotation). Writing a Secret's values (`add`, `replace`) and `remove` stay allowed:
 * those values come from the request, which the gateway stores sealed.
 *
 * JSON merge and strategic merge patches need no rule: neither can copy a value from one field of the object to
 * another (a merge patch only sets, replaces or deletes what it spells out; the strategic directives `$patch`,
 * `$retainKeys`, `$deleteFromPrimitiveList` and `$setElementOrder` only delete or order). Server-side apply likewise.
 *
 * Pure: the caller decides that the target is a Secret (./secret-kind.ts, or the resource discovery resolved) and
 * passes the patch parsed exactly as the cluster will receive it (./patch-text.ts).
 */

/** The pointers whose values, and whose ancestors' and descendants' values, a Secret patch may not read (tokens). */
const PROTECTED: readonly (readonly string[])[] = [
  ['data'],
  ['stringdata'],
  ['metadata', 'annotations', 'kubectl.kubernetes.io/last-applied-configuration'],
];

/** Ops that read a location, and the member naming it. */
const READS: Record<string, 'from' | 'path'> = { copy: 'from', move: 'from', test: 'path' };

/** Longest pointer quoted in a message. */
const MAX_QUOTED = 120;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The reference tokens of a JSON pointer (RFC 6901), unescaped (`~1` → `/`, `~0` → `~`, in one pass so `~01` is
 * `~1`) and lower-cased, or undefined when `pointer` is not one (neither empty nor starting with `/`: some
 * implementations then silently drop its first segment, so `x/data/password` reads `/data/password`).
 */
function tokensOf(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~[01]/g, (seq) => (seq === '~1' ? '/' : '~')).toLowerCase());
}

/** True when one token list is a prefix of the other (the same location, an ancestor or a descendant). */
function overlaps(a: readonly string[], b: readonly string[]): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

function quote(pointer: string): string {
  return JSON.stringify(pointer.length > MAX_QUOTED ? `${pointer.slice(0, MAX_QUOTED)}…` : pointer);
}

/**
 * Why the JSON patch `ops` may not run against a Secret, or undefined when it may. Refused: a patch that is not a
 * list of objects each with a string `op` (nothing could judge it), and a `copy`, `move` or `test` (`op` compared
 * without case) whose pointer is not a JSON pointer or reads a protected location (see the module comment). Tokens
 * are compared without case too, so no spelling the cluster might accept slips by. The message names the operation
 * and its pointer, never a `value` (a `test` value may be a right guess).
 */
export function secretPatchProblem(ops: unknown): string | undefined {
  if (!Array.isArray(ops)) return 'a JSON patch must be a list of operations';
  for (const [i, op] of ops.entries()) {
    if (!isRecord(op) || typeof op.op !== 'string') return `JSON patch operation ${i} must be an object with a string "op"`;
    const name = op.op.toLowerCase();
    // A `from` in another spelling (`From`) is read too: some decoders match member names without case.
    const spelledFrom = Object.keys(op).find((key) => key !== 'from' && key.toLowerCase() === 'from');
    if (spelledFrom !== undefined) return `JSON patch operation ${i} (${name}) spells "from" as ${quote(spelledFrom)}`;
    const member = READS[name];
    if (member === undefined) continue;
    const pointer = op[member];
    if (typeof pointer !== 'string') return `JSON patch operation ${i} (${name}) needs "${member}" as a JSON pointer string`;
    const tokens = tokensOf(pointer);
    if (tokens === undefined)
      return `JSON patch operation ${i} (${name}): "${member}" ${quote(pointer)} is not a JSON pointer (it must be empty or start with "/")`;
    if (PROTECTED.some((locked) => overlaps(tokens, locked))) {
      return (
        `JSON patch operation ${i} (${name} ${member} ${quote(pointer)}) would read the Secret's values: a patch of a Secret may ` +
        'not copy, move or test /data, /stringData, the last-applied annotation, anything below them or a path that holds them; ' +
        'set values with add or replace instead'
      );
    }
  }
  return undefined;
}
