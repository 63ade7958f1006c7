/**
 * Whether go-yaml v2 (the YAML library behind `kubectl get -o yaml`) may write a string as a plain scalar: only when,
 * read back unquoted, it would still be a string. `"true"`, `"yes"`, `"1"`, `"1_000"`, `"0x1F"`, `"1.5e3"`, `""`,
 * `"~"`, `"2024-01-01T00:00:00Z"` and base-60 numbers such as `"1:20"` would not, so kubectl quotes them
 * (`creationTimestamp: "2024-01-01T00:00:00Z"`, `resourceVersion: "123"`). A port of go-yaml's `resolve` for an untagged
 * scalar (sigs.k8s.io/yaml's goyaml.v2 fork, resolve.go) and its encoder's base-60 check.
 */

/** The scalars go-yaml reads as something other than a string, whatever their first character's class. */
const NOT_STRINGS = new Set([
  ...['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'],
  ...['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'],
  ...['', '~', 'null', 'Null', 'NULL'],
  ...['.nan', '.NaN', '.NAN', '.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF'],
  '<<',
]);

/** go-yaml's hint from the first byte: M (look it up), . (float), D/S (digit, sign: number or timestamp), N (empty). */
function hintOf(s: string): string {
  if (s === '') return 'N';
  const c = s[0]!;
  if (c === '+' || c === '-') return 'S';
  if (c >= '0' && c <= '9') return 'D';
  if ('yYnNtTfFoO~'.includes(c)) return 'M';
  return c === '.' ? '.' : '';
}

/** Go's `strconv.ParseFloat` succeeding on text already matched as decimal: it fails on overflow only. */
const finiteFloat = (s: string) => Number.isFinite(Number(s));

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Go's base-0 integer syntax (`strconv.ParseInt(s, 0, 64)`): an optional sign, then `0x…`, `0b…`, `0o…`, a leading-0
 * octal, or decimal. Returns the value, or undefined when the text is not an integer at all.
 */
function goInteger(s: string): bigint | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return undefined;
  let digits = m[2]!;
  if (/^0[0-7]+$/.test(digits)) digits = `0o${digits.slice(1)}`;
  const magnitude = BigInt(digits.replace(/^0([XBO])/, (_, p: string) => `0${p.toLowerCase()}`));
  return m[1] === '-' ? -magnitude : magnitude;
}

/**
 * A number as go-yaml resolves one: an int64, an unsigned integer (no sign), an out-of-range unsigned integer (a
 * big.Int in the fork), or a YAML-style float that does not overflow.
 */
function isNumber(s: string): boolean {
  const plain = s.replaceAll('_', '');
  const int = goInteger(plain);
  if (int !== undefined) {
    if (int >= INT64_MIN && int <= INT64_MAX) return true;
    // ParseUint takes no sign; its range error sends an unsigned one to big.Int.
    if (!/^[+-]/.test(plain)) return true;
  }
  return YAML_STYLE_FLOAT.test(plain) && finiteFloat(plain);
}

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** go-yaml's timestamps: `time.Parse` with `2006-1-2T15:4:5.999999999Z07:00` (or `t`), `2006-1-2 15:4:5.999999999`, `2006-1-2`. */
function isTimestamp(s: string): boolean {
  const m =
    /^(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))|(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?))?$/.exec(
      s,
    );
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && !leap ? 28 : DAYS[month - 1]!)) return false;
  const [hour, minute, second] = [m[4] ?? m[7], m[5] ?? m[8], m[6] ?? m[9]].map((v) => Number(v ?? 0));
  return hour! < 24 && minute! < 60 && second! < 60;
}

/** True when go-yaml v2 would read `s`, written plain, back as the same string (so kubectl writes it unquoted). */
export function plainReadsAsString(s: string): boolean {
  const hint = hintOf(s);
  if (hint !== '') {
    if (NOT_STRINGS.has(s)) return false;
    if (hint === '.' && /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(s) && finiteFloat(s)) return false;
    if ((hint === 'D' || hint === 'S') && (isTimestamp(s) || isNumber(s))) return false;
  }
  // The encoder quotes YAML 1.1 base-60 floats too, for other parsers.
  return !(/^[-+0-9]/.test(s) && s.includes(':') && BASE60_FLOAT.test(s));
}
