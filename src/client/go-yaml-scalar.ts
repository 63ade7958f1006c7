/**
 * How go-yaml v2's emitter (libyaml's, ported to Go: emitterc.go) writes one scalar: which style it may use (plain,
 * 'single', "double", | literal) given the characters, and how each style folds a long line at a space once the
 * column passes 80. `kubectl get -o yaml` goes through it, so `outpost get -o yaml` does the same, character for
 * character: `'*'`, `'a: b'`, `"yes"`, a wrapped annotation continued two columns in, `"\t"`, `"\U0001F600"`.
 */

/** The line width past which go-yaml breaks a scalar at its next space. */
const BEST_WIDTH = 80;

/** The part of the emitter's state a scalar reads and moves (see kubectl-yaml.ts). */
export interface ScalarCursor {
  column: number;
  whitespace: boolean;
  indention: boolean;
  /** Writes characters, each one column. */
  put(text: string): void;
  putBreak(): void;
  writeIndent(indent: number): void;
  writeIndicator(text: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void;
}

/** The style the encoder asks for: plain, double-quoted when plain would not read back as the string, literal with a newline. */
export type ScalarStyle = 'plain' | 'single' | 'double' | 'literal';

const isBreak = (c: number | undefined) => c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029;
const isSpace = (c: number | undefined) => c === 0x20;
const isBlank = (c: number | undefined) => c === 0x20 || c === 0x09;
const isBlankz = (c: number | undefined) => isBlank(c) || isBreak(c) || c === 0 || c === undefined;
/** go-yaml's is_printable: tab, CR and characters beyond the BMP are not. */
const isPrintable = (c: number) =>
  c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff);

interface Analysis {
  multiline: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

/** yaml_emitter_analyze_scalar, for block context (no flow collections hold scalars here). */
function analyze(chars: number[]): Analysis {
  if (chars.length === 0) return { multiline: false, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: false };
  const starts = String.fromCodePoint(...chars.slice(0, 3));
  let blockIndicators = starts === '---' || starts === '...';
  let lineBreaks = false;
  let special = false;
  let [leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak] = [false, false, false, false, false, false];
  let precededByWhitespace = true;
  let previousSpace = false;
  let previousBreak = false;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const ch = String.fromCodePoint(c);
    const followedByWhitespace = i + 1 >= chars.length || isBlank(chars[i + 1]);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) blockIndicators = true;
      else if ((ch === '?' || ch === ':' || ch === '-') && followedByWhitespace) blockIndicators = true;
    } else if ((ch === ':' && followedByWhitespace) || (ch === '#' && precededByWhitespace)) blockIndicators = true;
    if (!isPrintable(c)) special = true;
    if (isSpace(c)) {
      if (i === 0) leadingSpace = true;
      if (i === chars.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      [previousSpace, previousBreak] = [true, false];
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === chars.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      [previousSpace, previousBreak] = [false, true];
    } else [previousSpace, previousBreak] = [false, false];
    precededByWhitespace = isBlankz(c);
  }
  const edges = leadingSpace || leadingBreak || trailingSpace || trailingBreak;
  return {
    multiline: lineBreaks,
    blockPlainAllowed: !(edges || breakSpace || spaceBreak || special || lineBreaks || blockIndicators),
    singleQuotedAllowed: !(breakSpace || spaceBreak || special),
    blockAllowed: !(trailingSpace || spaceBreak || special),
  };
}

/** yaml_emitter_select_scalar_style for an untagged scalar in block context. */
function selectStyle(asked: ScalarStyle, a: Analysis, simpleKey: boolean, empty: boolean): ScalarStyle {
  let style = asked;
  if (simpleKey && a.multiline) style = 'double';
  if (style === 'plain' && (!a.blockPlainAllowed || (empty && simpleKey))) style = 'single';
  if (style === 'single' && !a.singleQuotedAllowed) style = 'double';
  if (style === 'literal' && (!a.blockAllowed || simpleKey)) style = 'double';
  return style;
}

/** Whether go-yaml writes `text` as a simple key (`key: value`) rather than a complex one (`? key`). */
export function isSimpleKey(text: string): boolean {
  return Buffer.byteLength(text, 'utf8') <= 128 && !analyze([...text].map((ch) => ch.codePointAt(0)!)).multiline;
}

const ESCAPES: Record<number, string> = {
  0: '0',
  7: 'a',
  8: 'b',
  9: 't',
  10: 'n',
  11: 'v',
  12: 'f',
  13: 'r',
  27: 'e',
  34: '"',
  92: '\\',
  133: 'N',
  160: '_',
  8232: 'L',
  8233: 'P',
};

function escapeOf(c: number): string {
  const short = ESCAPES[c];
  if (short) return `\\${short}`;
  const [letter, width] = c <= 0xff ? ['x', 2] : c <= 0xffff ? ['u', 4] : ['U', 8];
  return `\\${letter}${c.toString(16).toUpperCase().padStart(width, '0')}`;
}

/**
 * Writes `text` (asked in `asked` style) at the cursor; `indent` is the scalar's own indentation (its container's
 * plus two), where folded lines continue. A simple key never folds.
 */
export function writeScalar(cur: ScalarCursor, text: string, asked: ScalarStyle, indent: number, simpleKey: boolean): void {
  const chars = [...text].map((ch) => ch.codePointAt(0)!);
  const style = selectStyle(asked, analyze(chars), simpleKey, chars.length === 0);
  const allowBreaks = !simpleKey;
  const fold = (i: number, guard: boolean) =>
    allowBreaks && guard && cur.column > BEST_WIDTH && (style === 'plain' || (i > 0 && i < chars.length - 1));
  if (style === 'literal') return writeLiteral(cur, chars, indent);
  if (style === 'plain') {
    if (!cur.whitespace) cur.put(' ');
  } else cur.writeIndicator(style === 'single' ? "'" : '"', true, false, false);
  let spaces = false;
  let breaks = false;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (style === 'double' && (!isPrintable(c) || c === 0xfeff || isBreak(c) || c === 0x22 || c === 0x5c)) {
      cur.put(escapeOf(c));
      spaces = false;
    } else if (isSpace(c)) {
      const guard = !spaces && (style === 'double' || !isSpace(chars[i + 1]));
      if (fold(i, guard)) {
        cur.writeIndent(indent);
        if (style === 'double' && isSpace(chars[i + 1])) cur.put('\\');
      } else cur.put(' ');
      spaces = true;
    } else if (isBreak(c)) {
      // Plain and single-quoted scalars never hold a break here (the analysis sends those to another style), but
      // go-yaml's writers handle one, and so does this.
      if (!breaks && c === 0x0a) cur.putBreak();
      writeBreak(cur, c);
      cur.indention = true;
      breaks = true;
    } else {
      if (breaks) cur.writeIndent(indent);
      if (style === 'single' && c === 0x27) cur.put("'");
      cur.put(String.fromCodePoint(c));
      cur.indention = false;
      spaces = false;
      breaks = false;
    }
  }
  if (style !== 'plain') cur.writeIndicator(style === 'single' ? "'" : '"', false, false, false);
  cur.whitespace = false;
  cur.indention = false;
}

function writeBreak(cur: ScalarCursor, c: number): void {
  if (c === 0x0a) cur.putBreak();
  else {
    cur.put(String.fromCodePoint(c));
    cur.column = 0;
  }
}

/** `|` with its hints (`2` when it starts with a space or break; `-` strip, `+` keep), each line at `indent`. */
function writeLiteral(cur: ScalarCursor, chars: number[], indent: number): void {
  cur.writeIndicator('|', true, false, false);
  if (isSpace(chars[0]) || isBreak(chars[0])) cur.writeIndicator('2', false, false, false);
  const last = chars.length - 1;
  let chomp = '';
  if (chars.length === 0 || !isBreak(chars[last])) chomp = '-';
  else if (last === 0 || isBreak(chars[last - 1])) chomp = '+';
  // go-yaml marks the document open-ended after `+`, but writing the indicator clears that mark again at once.
  if (chomp) cur.writeIndicator(chomp, false, false, false);
  cur.putBreak();
  cur.indention = true;
  cur.whitespace = true;
  let breaks = true;
  for (const c of chars) {
    if (isBreak(c)) {
      writeBreak(cur, c);
      cur.indention = true;
      breaks = true;
    } else {
      if (breaks) cur.writeIndent(indent);
      cur.put(String.fromCodePoint(c));
      cur.indention = false;
      breaks = false;
    }
  }
}
