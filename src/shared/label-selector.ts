/**
 * Kubernetes label selectors in the string syntax used in `?labelSelector=` and `kubectl -l`, parsed into a
 * {@link LabelSelector}, a list of requirements that must all hold.
 *
 * Shared by the sandbox API server (list/watch filtering) and the gateway (filtering its cache), so the parsed form is
 * exported and stable.
 */

/** One requirement on one label key. `values` is empty for `Exists`/`DoesNotExist`, one value for `Equals`/`NotEquals`. */
export type LabelRequirement = {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Equals' | 'NotEquals';
  values: string[];
};

/** A conjunction of requirements; the empty selector matches every object. */
export type LabelSelector = LabelRequirement[];

/** Thrown for a selector that does not parse or names an invalid key/value; `message` says what and where. */
export class SelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorError';
  }
}

const NAME_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Checks a label key: an optional DNS-subdomain prefix (≤ 253 chars) and `/`, then a name of ≤ 63 characters made of
 * alphanumerics, `-`, `_`, `.`, starting and ending with an alphanumeric. Throws {@link SelectorError}.
 */
function validateLabelKey(key: string): void {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = key.slice(slash + 1);
  if (prefix !== undefined) {
    if (prefix.length === 0) throw new SelectorError(`invalid label key "${key}": prefix part must be non-empty`);
    if (prefix.length > 253 || !DNS_SUBDOMAIN_RE.test(prefix)) {
      throw new SelectorError(`invalid label key "${key}": prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters`);
    }
  }
  if (name.length === 0) throw new SelectorError(`invalid label key "${key}": name part must be non-empty`);
  if (name.length > 63) throw new SelectorError(`invalid label key "${key}": name part must be no more than 63 characters`);
  if (!NAME_RE.test(name)) {
    throw new SelectorError(
      `invalid label key "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', ` +
        `and must start and end with an alphanumeric character`,
    );
  }
}

/** Checks a label value: empty, or ≤ 63 characters of alphanumerics, `-`, `_`, `.` starting/ending alphanumeric. */
function validateLabelValue(key: string, value: string): void {
  if (value === '') return;
  if (value.length > 63) {
    throw new SelectorError(`invalid label value "${value}" for key "${key}": must be no more than 63 characters`);
  }
  if (!NAME_RE.test(value)) {
    throw new SelectorError(
      `invalid label value "${value}" for key "${key}": must be empty or consist of alphanumeric characters, ` +
        `'-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
}

type Op = '=' | '==' | '!=' | '!' | '(' | ')' | ',' | '<' | '>';

/**
 * One token at `pos`: an operator, an identifier (a key, a value, `in` or `notin`), or the end of the string. Each
 * test reads the one field it needs: an operator's text never is an identifier's (identifiers stop at every special
 * character), so no check needs a separate type.
 */
type Token = { op?: Op; ident?: string; end?: true; pos: number };

const SPECIAL = new Set(['=', '!', '(', ')', ',', '<', '>']);
/** An identifier: everything up to the next special character or whitespace (sticky: matched at `lastIndex`). */
const IDENT_RE = /[^=!(),<>\s]+/y;

function tokenize(s: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '=' && s[i + 1] === '=') {
      tokens.push({ op: '==', pos: i });
      i += 2;
    } else if (c === '!' && s[i + 1] === '=') {
      tokens.push({ op: '!=', pos: i });
      i += 2;
    } else if (SPECIAL.has(c)) {
      tokens.push({ op: c as Op, pos: i });
      i++;
    } else {
      IDENT_RE.lastIndex = i;
      const ident = (IDENT_RE.exec(s) as RegExpExecArray)[0];
      tokens.push({ ident, pos: i });
      i += ident.length;
    }
  }
  tokens.push({ end: true, pos: s.length });
  return tokens;
}

function describe(t: Token): string {
  return t.end ? 'end of string' : `"${t.op ?? t.ident}"`;
}

/**
 * Parses the Kubernetes label selector string syntax: comma-separated requirements `key=value`, `key==value`,
 * `key!=value`, `key in (v1,v2)`, `key notin (v1)`, `key` (exists) and `!key` (does not exist). Whitespace around
 * tokens is ignored; the empty string is the match-everything selector. Keys and values are validated like Kubernetes
 * does. Throws {@link SelectorError} with the position of the problem.
 */
export function parseLabelSelector(s: string): LabelSelector {
  if (typeof s !== 'string') throw new SelectorError('label selector must be a string');
  const tokens = tokenize(s);
  let p = 0;
  const peek = () => tokens[p];
  const next = () => tokens[p++];
  const fail = (t: Token, what: string): never => {
    throw new SelectorError(`unable to parse label selector "${s}": ${what} at position ${t.pos}, found ${describe(t)}`);
  };
  const selector: LabelSelector = [];
  if (peek().end) return selector;

  for (;;) {
    let t = next();
    if (t.op === '!') {
      const k = next();
      if (k.ident === undefined) fail(k, 'expected a label key after "!"');
      const key = k.ident as string;
      validateLabelKey(key);
      selector.push({ key, operator: 'DoesNotExist', values: [] });
    } else if (t.ident !== undefined) {
      const key = t.ident;
      validateLabelKey(key);
      const op = peek();
      if (op.end || op.op === ',') {
        selector.push({ key, operator: 'Exists', values: [] });
      } else if (op.op === '=' || op.op === '==' || op.op === '!=') {
        next();
        const v = peek();
        let value = '';
        if (v.ident !== undefined) {
          value = v.ident;
          next();
        } else if (!(v.end || v.op === ',')) {
          fail(v, `expected a value after "${op.op}"`);
        }
        validateLabelValue(key, value);
        selector.push({ key, operator: op.op === '!=' ? 'NotEquals' : 'Equals', values: [value] });
      } else if (op.ident === 'in' || op.ident === 'notin') {
        next();
        const open = next();
        if (open.op !== '(') fail(open, `expected "(" after "${op.ident}"`);
        if (peek().op === ')') {
          throw new SelectorError(`unable to parse label selector "${s}": for 'in', 'notin' operators, values set can't be empty`);
        }
        const values: string[] = [];
        for (;;) {
          const v = peek();
          // an empty slot, as in "(a,)" or "(,a)", is the empty-string value
          if (v.ident !== undefined) {
            values.push(v.ident);
            next();
          } else if (v.op === ',' || v.op === ')') {
            values.push('');
          } else {
            fail(v, 'expected a value, "," or ")" in value set');
          }
          const sep = next();
          if (sep.op === ')') break;
          if (sep.op !== ',') fail(sep, 'expected "," or ")" in value set');
        }
        for (const v of values) validateLabelValue(key, v);
        selector.push({ key, operator: op.ident === 'in' ? 'In' : 'NotIn', values: [...new Set(values)].sort() });
      } else if (op.op === '<' || op.op === '>') {
        throw new SelectorError(`unable to parse label selector "${s}": operator "${op.op}" is not supported`);
      } else {
        fail(op, `expected an operator (=, ==, !=, in, notin) or "," after key "${key}"`);
      }
    } else {
      fail(t, 'expected a label key or "!"');
    }
    t = next();
    if (t.end) break;
    if (t.op !== ',') fail(t, 'expected ","');
    if (peek().end) fail(peek(), 'expected a requirement after ","');
  }
  return selector;
}

/**
 * True when `labels` satisfies every requirement. As in Kubernetes, `NotEquals` and `NotIn` also match objects that do
 * not carry the key at all. `labels` may be undefined (an object without labels).
 */
export function matchesLabelSelector(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  for (const r of sel) {
    const has = Object.hasOwn(l, r.key);
    const v = has ? l[r.key] : undefined;
    switch (r.operator) {
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      case 'Equals':
      case 'In':
        if (!has || !r.values.includes(v as string)) return false;
        break;
      case 'NotEquals':
      case 'NotIn':
        if (has && r.values.includes(v as string)) return false;
        break;
    }
  }
  return true;
}
