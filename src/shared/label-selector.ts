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
  const name = slash >= 0 ? key.slice(slash + 1) : key;
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

type Token =
  | { type: 'ident'; value: string; pos: number }
  | { type: 'op'; value: '=' | '==' | '!=' | '!' | '(' | ')' | ',' | '<' | '>'; pos: number }
  | { type: 'end'; pos: number };

const SPECIAL = new Set(['=', '!', '(', ')', ',', '<', '>']);

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
      tokens.push({ type: 'op', value: '==', pos: i });
      i += 2;
    } else if (c === '!' && s[i + 1] === '=') {
      tokens.push({ type: 'op', value: '!=', pos: i });
      i += 2;
    } else if (SPECIAL.has(c)) {
      tokens.push({ type: 'op', value: c as '=' | '!' | '(' | ')' | ',' | '<' | '>', pos: i });
      i++;
    } else {
      const start = i;
      while (i < s.length && !SPECIAL.has(s[i]) && !/\s/.test(s[i])) i++;
      tokens.push({ type: 'ident', value: s.slice(start, i), pos: start });
    }
  }
  tokens.push({ type: 'end', pos: s.length });
  return tokens;
}

function describe(t: Token): string {
  return t.type === 'end' ? 'end of string' : `"${t.value}"`;
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
  if (peek().type === 'end') return selector;

  for (;;) {
    let t = next();
    if (t.type === 'op' && t.value === '!') {
      const k = next();
      if (k.type !== 'ident') fail(k, 'expected a label key after "!"');
      const key = (k as { value: string }).value;
      validateLabelKey(key);
      selector.push({ key, operator: 'DoesNotExist', values: [] });
    } else if (t.type === 'ident') {
      const key = t.value;
      validateLabelKey(key);
      const op = peek();
      if (op.type === 'end' || (op.type === 'op' && op.value === ',')) {
        selector.push({ key, operator: 'Exists', values: [] });
      } else if (op.type === 'op' && (op.value === '=' || op.value === '==' || op.value === '!=')) {
        next();
        const v = peek();
        let value = '';
        if (v.type === 'ident') {
          value = v.value;
          next();
        } else if (!(v.type === 'end' || (v.type === 'op' && v.value === ','))) {
          fail(v, `expected a value after "${op.value}"`);
        }
        validateLabelValue(key, value);
        selector.push({ key, operator: op.value === '!=' ? 'NotEquals' : 'Equals', values: [value] });
      } else if (op.type === 'ident' && (op.value === 'in' || op.value === 'notin')) {
        next();
        const open = next();
        if (!(open.type === 'op' && open.value === '(')) fail(open, `expected "(" after "${op.value}"`);
        const values: string[] = [];
        for (;;) {
          const v = peek();
          // an empty slot, as in "(a,)" or "(,a)", is the empty-string value
          if (v.type === 'ident') {
            values.push(v.value);
            next();
          } else if (v.type === 'op' && v.value === ')' && values.length === 0) {
            next();
            break;
          } else if (v.type === 'op' && (v.value === ',' || v.value === ')')) {
            values.push('');
          } else {
            fail(v, 'expected a value, "," or ")" in value set');
          }
          const sep = next();
          if (sep.type === 'op' && sep.value === ')') break;
          if (!(sep.type === 'op' && sep.value === ',')) fail(sep, 'expected "," or ")" in value set');
        }
        const cleaned = values;
        if (cleaned.length === 0) {
          throw new SelectorError(`unable to parse label selector "${s}": for 'in', 'notin' operators, values set can't be empty`);
        }
        for (const v of cleaned) validateLabelValue(key, v);
        selector.push({ key, operator: op.value === 'in' ? 'In' : 'NotIn', values: [...new Set(cleaned)].sort() });
      } else if (op.type === 'op' && (op.value === '<' || op.value === '>')) {
        throw new SelectorError(`unable to parse label selector "${s}": operator "${op.value}" is not supported`);
      } else {
        fail(op, `expected an operator (=, ==, !=, in, notin) or "," after key "${key}"`);
      }
    } else {
      fail(t, 'expected a label key or "!"');
    }
    t = next();
    if (t.type === 'end') break;
    if (!(t.type === 'op' && t.value === ',')) fail(t, 'expected ","');
    if (peek().type === 'end') fail(peek(), 'expected a requirement after ","');
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
