/**
 * Clouddriver's `labelSelectors` (`{"selectors": [{"kind": "EQUALS", "key": "app", "values": ["web"]}]}`) as a
 * Kubernetes label selector string. Kinds: ANY (matches everything: no requirement), EQUALS, NOT_EQUALS, CONTAINS (in),
 * NOT_CONTAINS (notin), EXISTS, NOT_EXISTS.
 */
import { badDescription } from './description-fields.js';

/** The selector string; 400 for a malformed or empty selector list (label mode must select something). */
export function labelSelectorText(raw: unknown): string {
  const selectors = (raw as { selectors?: unknown } | undefined)?.selectors;
  if (!Array.isArray(selectors) || selectors.length === 0) throw badDescription('labelSelectors.selectors must be a non-empty list');
  const parts: string[] = [];
  for (const [n, s] of selectors.entries()) {
    const { kind, key, values } = (s ?? {}) as { kind?: unknown; key?: unknown; values?: unknown };
    if (typeof key !== 'string' || !key) throw badDescription(`labelSelectors.selectors[${n}].key is required`);
    const list = values === undefined || values === null ? [] : values;
    if (!Array.isArray(list) || list.some((v) => typeof v !== 'string')) throw badDescription(`labelSelectors.selectors[${n}].values must be a list of strings`);
    const vals = list as string[];
    const one = () => {
      if (vals.length !== 1) throw badDescription(`labelSelectors.selectors[${n}] (${String(kind)}) needs exactly one value`);
      return vals[0]!;
    };
    switch (kind) {
      case 'ANY':
        break;
      case 'EQUALS':
        parts.push(`${key}=${one()}`);
        break;
      case 'NOT_EQUALS':
        parts.push(`${key}!=${one()}`);
        break;
      case 'CONTAINS':
        parts.push(`${key} in (${vals.join(',')})`);
        break;
      case 'NOT_CONTAINS':
        parts.push(`${key} notin (${vals.join(',')})`);
        break;
      case 'EXISTS':
        parts.push(key);
        break;
      case 'NOT_EXISTS':
        parts.push(`!${key}`);
        break;
      default:
        throw badDescription(`labelSelectors.selectors[${n}].kind must be one of ANY, EQUALS, NOT_EQUALS, CONTAINS, NOT_CONTAINS, EXISTS, NOT_EXISTS (got ${JSON.stringify(kind)})`);
    }
  }
  if (parts.length === 0) throw badDescription('labelSelectors select every object (only ANY): refusing to delete them all');
  return parts.join(',');
}
