/**
 * Kubernetes field selectors (`?fieldSelector=metadata.name=foo,status.phase!=Running`). The real API server only
 * allows a few fields per kind; the sandbox accepts any dotted path into the object, which is a superset, so every
 * selector kubectl or client-node sends works.
 */
import { SelectorError } from '../shared/label-selector.js';

/** One `field op value` term; all terms must hold. */
interface FieldRequirement {
  /** Dotted path into the object, e.g. `metadata.name`, `status.phase`, `spec.nodeName`. */
  field: string;
  operator: 'Equals' | 'NotEquals';
  value: string;
}

/** A parsed field selector; the empty list matches everything. */
export type FieldSelector = FieldRequirement[];

const FIELD_RE = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

/** Splits on unescaped `sep`, keeping escapes (`\,`, `\=`, `\\`) for the next stage. */
function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      parts.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  parts.push(cur);
  return parts;
}

function unescapeValue(s: string, whole: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') {
      const n = s[i + 1];
      if (n === '\\' || n === ',' || n === '=') {
        out += n;
        i++;
        continue;
      }
      throw new SelectorError(`invalid field selector "${whole}": invalid escape sequence "\\${n ?? ''}"`);
    }
    out += s[i];
  }
  return out;
}

/**
 * Parses `field=value`, `field==value`, `field!=value` terms separated by commas. Values may be empty
 * (`spec.nodeName=` selects unscheduled pods) and may escape `,`, `=` and `\` with a backslash, as kubectl does.
 * Throws {@link SelectorError} for a term without an operator or an invalid field path.
 */
export function parseFieldSelector(s: string): FieldSelector {
  if (typeof s !== 'string') throw new SelectorError('field selector must be a string');
  if (s.trim() === '') return [];
  const out: FieldSelector = [];
  for (const raw of splitUnescaped(s, ',')) {
    const term = raw.trim();
    if (term === '') throw new SelectorError(`invalid field selector "${s}": empty term`);
    // find the first unescaped operator
    let idx = -1;
    let opLen = 0;
    let operator: FieldRequirement['operator'] = 'Equals';
    for (let i = 0; i < term.length; i++) {
      const c = term[i];
      if (c === '\\') {
        i++;
        continue;
      }
      if (c === '!' && term[i + 1] === '=') {
        idx = i;
        opLen = 2;
        operator = 'NotEquals';
        break;
      }
      if (c === '=') {
        idx = i;
        opLen = term[i + 1] === '=' ? 2 : 1;
        operator = 'Equals';
        break;
      }
    }
    if (idx < 0) {
      throw new SelectorError(`invalid field selector "${s}": "${term}" is not of the form field=value or field!=value`);
    }
    const field = term.slice(0, idx).trim();
    if (!FIELD_RE.test(field)) {
      throw new SelectorError(`invalid field selector "${s}": "${field}" is not a valid field path`);
    }
    const value = unescapeValue(term.slice(idx + opLen).trim(), s);
    out.push({ field, operator, value });
  }
  return out;
}

/** Reads a dotted path; scalars become strings (`true`, `3`), absent or null fields read as the empty string. */
function fieldValue(obj: Record<string, unknown>, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return '';
  if (typeof cur === 'string') return cur;
  if (typeof cur === 'number' || typeof cur === 'boolean') return String(cur);
  return JSON.stringify(cur);
}

/**
 * True when every term holds for `obj`. A missing field compares as the empty string, so `spec.nodeName!=` matches
 * scheduled pods and `spec.nodeName=` unscheduled ones, as in Kubernetes.
 */
export function matchesFieldSelector(sel: FieldSelector, obj: Record<string, unknown>): boolean {
  for (const r of sel) {
    const v = fieldValue(obj, r.field);
    if (r.operator === 'Equals' ? v !== r.value : v === r.value) return false;
  }
  return true;
}
