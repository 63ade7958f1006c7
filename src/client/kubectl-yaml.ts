/**
 * JSON values as `kubectl get -o yaml` prints them, byte for byte. kubectl marshals the object to JSON and converts
 * that to YAML with sigs.k8s.io/yaml, whose go-yaml v2 reads it into plain maps and writes them back: every mapping's
 * keys sorted (go-yaml's order, not the API server's: `metadata` after `kind`, `uid` last), sequences not indented
 * under their key (`- name: web` level with `containers:`), two spaces per level, empty collections as `{}` and `[]`,
 * strings that would read back as another type quoted (`creationTimestamp: "2024-01-01T00:00:00Z"`, `"1"`, `"yes"`),
 * long lines folded past column 80. Scalars: ./go-yaml-scalar.ts and ./go-yaml-resolve.ts.
 */
import type { JsonValue } from '@bufbuild/protobuf';
import { plainReadsAsString } from './go-yaml-resolve.js';
import { isSimpleKey, writeScalar, type ScalarCursor, type ScalarStyle } from './go-yaml-scalar.js';

const isLetter = (c: number) => /\p{L}/u.test(String.fromCodePoint(c));
const isDigit = (c: number) => /\p{Nd}/u.test(String.fromCodePoint(c));

/**
 * go-yaml v2's order of string keys (sorter.go, keyList.Less): character by character, a letter after any other
 * character, runs of digits compared as numbers (`item2` before `item10`), then the shorter first.
 */
export function goYamlKeyOrder(a: string, b: string): number {
  if (a === b) return 0;
  const less = (x: string, y: string): boolean => {
    const ar = [...x].map((ch) => ch.codePointAt(0)!);
    const br = [...y].map((ch) => ch.codePointAt(0)!);
    for (let i = 0; i < ar.length && i < br.length; i++) {
      if (ar[i] === br[i]) continue;
      const al = isLetter(ar[i]!);
      const bl = isLetter(br[i]!);
      if (al && bl) return ar[i]! < br[i]!;
      if (al || bl) return bl;
      let an = 0n;
      let bn = 0n;
      if (ar[i] === 0x30 || br[i] === 0x30) {
        for (let j = i - 1; j >= 0 && isDigit(ar[j]!); j--) {
          if (ar[j] !== 0x30) {
            an = 1n;
            bn = 1n;
            break;
          }
        }
      }
      let ai = i;
      let bi = i;
      for (; ai < ar.length && isDigit(ar[ai]!); ai++) an = an * 10n + BigInt(ar[ai]! - 0x30);
      for (; bi < br.length && isDigit(br[bi]!); bi++) bn = bn * 10n + BigInt(br[bi]! - 0x30);
      if (an !== bn) return an < bn;
      if (ai !== bi) return ai < bi;
      return ar[i]! < br[i]!;
    }
    return ar.length < br.length;
  };
  return less(a, b) ? -1 : less(b, a) ? 1 : 0;
}

/**
 * A string as go-yaml reads it back from kubectl's JSON: Go's encoder leaves U+0085 (NEL) raw, and YAML takes it for
 * a line break inside the double-quoted scalar and folds it with the spaces around it — one NEL into a space, n of
 * them into n-1 newlines. (Other characters Go leaves raw and YAML refuses — DEL, the C1 controls, U+FFFE, U+FFFF —
 * make kubectl fail with `yaml: control characters are not allowed`; they are written escaped here instead.)
 */
function asReadBack(s: string): string {
  if (!s.includes('\u0085')) return s;
  return s.replace(/ *\u0085[ \u0085]*/g, (run) => {
    const breaks = run.split('\u0085').length - 1;
    return breaks === 1 ? ' ' : '\n'.repeat(breaks - 1);
  });
}

/** A number as go-yaml writes what it read from kubectl's JSON: integers as such, other floats in Go's `%g`. */
function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString();
  if (!Number.isFinite(n)) return Number.isNaN(n) ? '.nan' : n > 0 ? '.inf' : '-.inf';
  const [mantissa, exponent] = n.toExponential().split('e') as [string, string];
  const exp = Number(exponent);
  if (exp >= -4 && exp < 6) return String(n);
  return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/** The emitter's position and flags, as libyaml keeps them. */
function createCursor(): ScalarCursor & { text(): string } {
  const out: string[] = [];
  const cursor = {
    column: 0,
    whitespace: true,
    indention: true,
    put(text: string) {
      out.push(text);
      for (const _ of text) cursor.column++;
    },
    putBreak() {
      out.push('\n');
      cursor.column = 0;
    },
    writeIndent(indent: number) {
      const at = Math.max(indent, 0);
      if (!cursor.indention || cursor.column > at || (cursor.column === at && !cursor.whitespace)) cursor.putBreak();
      while (cursor.column < at) cursor.put(' ');
      cursor.whitespace = true;
      cursor.indention = true;
    },
    writeIndicator(text: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean) {
      if (needWhitespace && !cursor.whitespace) cursor.put(' ');
      cursor.put(text);
      cursor.whitespace = isWhitespace;
      cursor.indention = cursor.indention && isIndention;
    },
    text: () => out.join(''),
  };
  return cursor;
}

type Cursor = ReturnType<typeof createCursor>;

/** A scalar node: `indent` is its container's (the scalar itself sits two further in). */
function emitScalar(cur: Cursor, value: string | number | boolean | null, indent: number, simpleKey = false): void {
  let text: string;
  let style: ScalarStyle = 'plain';
  if (typeof value === 'string') {
    text = asReadBack(value);
    if (text.includes('\n')) style = 'literal';
    else if (!plainReadsAsString(text)) style = 'double';
  } else text = value === null ? 'null' : typeof value === 'number' ? goNumber(value) : String(value);
  writeScalar(cur, text, style, indent < 0 ? 2 : indent + 2, simpleKey);
}

function emitNode(cur: Cursor, value: JsonValue, indent: number, inMapping: boolean): void {
  if (Array.isArray(value)) {
    if (value.length === 0) return flowEmpty(cur, '[]');
    // A sequence that is a mapping's value starts level with its key.
    const at = indent < 0 ? 0 : inMapping && !cur.indention ? indent : indent + 2;
    for (const item of value) {
      cur.writeIndent(at);
      cur.writeIndicator('-', true, false, true);
      emitNode(cur, item, at, false);
    }
    return;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .map(([key, v]) => [asReadBack(key), v] as const)
      .sort(([a], [b]) => goYamlKeyOrder(a, b));
    if (entries.length === 0) return flowEmpty(cur, '{}');
    const at = indent < 0 ? 0 : indent + 2;
    for (const [key, v] of entries) {
      cur.writeIndent(at);
      if (isSimpleKey(key)) {
        emitScalar(cur, key, at, true);
        cur.writeIndicator(':', false, false, false);
      } else {
        cur.writeIndicator('?', true, false, true);
        emitScalar(cur, key, at);
        cur.writeIndent(at);
        cur.writeIndicator(':', true, false, true);
      }
      emitNode(cur, v!, at, true);
    }
    return;
  }
  emitScalar(cur, value, indent);
}

function flowEmpty(cur: Cursor, text: '[]' | '{}'): void {
  cur.writeIndicator(text[0]!, true, true, false);
  cur.writeIndicator(text[1]!, false, false, false);
}

/**
 * `value` as kubectl's YAML: one document, no `---`, ending in a newline. The caller passes what kubectl would print
 * (the object without `metadata.managedFields`, or kubectl's `List`).
 */
export function toKubectlYaml(value: JsonValue): string {
  const cur = createCursor();
  emitNode(cur, value, -1, false);
  // The document's end: a line break unless a literal already ended the line.
  cur.writeIndent(0);
  return cur.text();
}
