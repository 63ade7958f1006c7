/**
 * How deep objects and arrays may nest in any JSON or YAML a peer sends (docs/hostile-input.md, "Nesting"). Code that
 * walks a document recursively (structured clones, the YAML library, manifest checks, Postgres's `jsonb` parser) runs
 * out of stack somewhere between a few hundred and a few thousand levels, and then fails far from the input — a task
 * that dies with "Maximum call stack size exceeded". Every entry point refuses deeper input before anything is stored.
 * Real Kubernetes manifests, CRD schemas included, stay far below the limit.
 */

/** The deepest nesting of objects and arrays accepted (a scalar at the top is depth 0, `{}` is depth 1). */
export const MAX_NESTING_DEPTH = 512;

/**
 * Why `value` (parsed JSON or YAML, or a protobuf-es message) nests deeper than `limit`, or undefined when it does
 * not. Walks with an explicit stack, never recursion, and stops at the first path past the limit. `where` names the
 * root in the message (`body`).
 */
export function nestingProblem(value: unknown, where: string, limit = MAX_NESTING_DEPTH): string | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object' || item instanceof Uint8Array) continue;
    if (depth + 1 > limit) return tooDeep(where, limit);
    const children = Array.isArray(item) ? item : Object.values(item);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return undefined;
}

/**
 * Why the document `text` (JSON, or YAML with one or more documents) may nest deeper than `limit`, or undefined when
 * it cannot — read from the text without parsing it, so a string field holding a document (apply manifests, a patch)
 * is refused before any parser or walker recurses into it. The reading is an upper bound: flow collections
 * (`[`, `{`) count where they open, block collections by their indentation, `- - x` sequences by their dashes;
 * quoted scalars, comments and block scalars (`|`, `>`) count nothing.
 */
export function textNestingProblem(text: string, where: string, limit = MAX_NESTING_DEPTH): string | undefined {
  return textNestingDepth(text, limit) > limit ? tooDeep(where, limit) : undefined;
}

/**
 * {@link nestingProblem} for text already known to be valid JSON, without walking the parsed value — for hot paths
 * (every object an agent streams). Text with at most `limit` brackets cannot nest deeper and is counted with native
 * `indexOf` only; anything else is scanned once, skipping strings.
 */
export function jsonTextNestingProblem(text: string, where: string, limit = MAX_NESTING_DEPTH): string | undefined {
  let brackets = 0;
  for (const open of ['{', '[']) {
    for (let i = text.indexOf(open); i >= 0 && brackets <= limit; i = text.indexOf(open, i + 1)) brackets += 1;
  }
  if (brackets <= limit) return undefined;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < text.length; i++) {
        const k = text.charCodeAt(i);
        if (k === 0x5c) i++;
        else if (k === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return tooDeep(where, limit);
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

function tooDeep(where: string, limit: number): string {
  return `${where} nests objects and arrays more than ${limit} levels deep`;
}

const TOKEN_START = new Set(['', ':', '-', '[', '{', ',', '?']);

/** The nesting depth of `text` as {@link textNestingProblem} reads it; stops counting once past `stopAbove`. */
export function textNestingDepth(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  let max = 0;
  let flow = 0;
  let quote: '"' | "'" | undefined;
  /** Indentation of the line that opened a block scalar; lines indented deeper are its content. */
  let blockScalarOf: number | undefined;
  const indents: number[] = [];
  /** Block levels open at the current line (kept while a flow collection or a quoted scalar spans lines). */
  let block = 0;
  for (const line of text.split('\n')) {
    let start = 0;
    if (quote === undefined && flow === 0) {
      const indent = line.length - line.trimStart().length;
      const rest = line.slice(indent);
      if (blockScalarOf !== undefined) {
        if (rest === '' || rest === '\r' || indent > blockScalarOf) continue;
        blockScalarOf = undefined;
      }
      if (rest === '' || rest === '\r' || rest.startsWith('#')) continue;
      if (indent === 0 && (rest.startsWith('---') || rest.startsWith('...'))) {
        indents.length = 0;
        start = 3;
      } else {
        while (indents.length > 0 && indents[indents.length - 1]! >= indent) indents.pop();
        // A line that opens a flow collection is a value, not an entry of a block collection at its indentation.
        if (rest[0] !== '[' && rest[0] !== '{') indents.push(indent);
        start = indent;
        // `- - x`: each dash opens a sequence one column pair further in; a key after them opens a mapping there.
        while (line[start] === '-' && (line[start + 1] === ' ' || start + 1 >= line.trimEnd().length)) {
          start += 1;
          while (line[start] === ' ') start += 1;
          if (start < line.trimEnd().length) indents.push(start);
        }
      }
      block = indents.length;
      max = Math.max(max, block);
    }
    let previous = '';
    for (let i = start; i < line.length; i++) {
      const ch = line[i]!;
      if (quote === '"') {
        if (ch === '\\') i += 1;
        else if (ch === '"') quote = undefined;
        previous = 'x';
        continue;
      }
      if (quote === "'") {
        if (ch === "'" && line[i + 1] === "'") i += 1;
        else if (ch === "'") quote = undefined;
        previous = 'x';
        continue;
      }
      if (ch === ' ' || ch === '\t' || ch === '\r') continue;
      if (ch === '#' && (i === 0 || line[i - 1] === ' ' || line[i - 1] === '\t')) break;
      // In block context `[`, `{` and quotes start something only where a value may start (`a: x[1]` is plain text);
      // inside a flow collection a plain scalar cannot hold them, so every bracket counts.
      const atTokenStart = TOKEN_START.has(previous);
      if ((ch === '"' || ch === "'") && atTokenStart) quote = ch;
      else if ((ch === '[' || ch === '{') && (flow > 0 || atTokenStart)) {
        flow += 1;
        max = Math.max(max, block + flow);
        if (max > stopAbove) return max;
        previous = ch;
        continue;
      } else if ((ch === ']' || ch === '}') && flow > 0) flow -= 1;
      else if (
        (ch === '|' || ch === '>') &&
        flow === 0 &&
        TOKEN_START.has(previous) &&
        /^[|>][-+0-9]*\s*(#.*)?$/.test(line.slice(i).trimEnd())
      ) {
        blockScalarOf = line.length - line.trimStart().length;
        break;
      }
      // What may precede the start of a value: an indicator followed by a space (or the end), a flow separator.
      const next = line[i + 1];
      const indicator = (ch === ':' || ch === '-' || ch === '?') && (next === undefined || next === ' ' || next === '\r' || flow > 0);
      previous = indicator || (flow > 0 && ch === ',') ? ch : 'x';
    }
    if (max > stopAbove) return max;
  }
  return max;
}
