/**
 * Clouddriver's `labelSelectors` (`{"selectors": [{"kind": "EQUALS", "key": "app", "values": ["web"]}]}`): parsed
 * into requirements, written as a Kubernetes label selector (delete in label mode lists through the API server), and
 * matched against an object's labels (deploy applies only the manifests they select, as `kubectl apply --selector`
 * filters its input). Kinds: ANY (no requirement), EQUALS, NOT_EQUALS, CONTAINS (in), NOT_CONTAINS (notin), EXISTS,
 * NOT_EXISTS.
 */

/** One requirement; ANY selectors leave none. */
export interface LabelRequirement {
  op: '=' | '!=' | 'in' | 'notin' | 'exists' | '!';
  key: string;
  values: string[];
}

/** A malformed selector list; the caller turns it into its own 400. */
export class LabelSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LabelSelectorError';
  }
}

const OPS: Record<string, LabelRequirement['op'] | null> = {
  ANY: null,
  EQUALS: '=',
  NOT_EQUALS: '!=',
  CONTAINS: 'in',
  NOT_CONTAINS: 'notin',
  EXISTS: 'exists',
  NOT_EXISTS: '!',
};

/**
 * The requirements of `raw` (the description's `labelSelectors`). `undefined` when it names no selector at all
 * (absent, null, or an empty `selectors` list: nothing to filter by); throws {@link LabelSelectorError} when it is
 * malformed.
 */
export function parseLabelSelectors(raw: unknown): LabelRequirement[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new LabelSelectorError('labelSelectors must be an object {"selectors": [...]}');
  const selectors = (raw as { selectors?: unknown }).selectors;
  if (selectors === undefined || selectors === null) return undefined;
  if (!Array.isArray(selectors)) throw new LabelSelectorError('labelSelectors.selectors must be a list');
  if (selectors.length === 0) return undefined;
  const out: LabelRequirement[] = [];
  for (const [n, s] of selectors.entries()) {
    const { kind, key, values } = (s ?? {}) as { kind?: unknown; key?: unknown; values?: unknown };
    if (typeof kind !== 'string' || !Object.hasOwn(OPS, kind)) {
      throw new LabelSelectorError(
        `labelSelectors.selectors[${n}].kind must be one of ${Object.keys(OPS).join(', ')} (got ${JSON.stringify(kind)})`,
      );
    }
    const op = OPS[kind]!;
    if (op === null) continue;
    if (typeof key !== 'string' || !key) throw new LabelSelectorError(`labelSelectors.selectors[${n}].key is required`);
    const list = values === undefined || values === null ? [] : values;
    if (!Array.isArray(list) || list.some((v) => typeof v !== 'string'))
      throw new LabelSelectorError(`labelSelectors.selectors[${n}].values must be a list of strings`);
    const vals = list as string[];
    if ((op === '=' || op === '!=') && vals.length !== 1)
      throw new LabelSelectorError(`labelSelectors.selectors[${n}] (${kind}) needs exactly one value`);
    if ((op === 'in' || op === 'notin') && vals.length === 0)
      throw new LabelSelectorError(`labelSelectors.selectors[${n}] (${kind}) needs at least one value`);
    out.push({ op, key, values: op === 'exists' || op === '!' ? [] : vals });
  }
  return out;
}

/** The requirements as a Kubernetes label selector string (`app=web,tier in (a,b),!legacy`). */
export function labelSelectorText(requirements: LabelRequirement[]): string {
  return requirements
    .map(({ op, key, values }) => {
      switch (op) {
        case '=':
        case '!=':
          return `${key}${op}${values[0]}`;
        case 'in':
        case 'notin':
          return `${key} ${op} (${values.join(',')})`;
        case 'exists':
          return key;
        case '!':
          return `!${key}`;
      }
    })
    .join(',');
}

/** True when `labels` satisfy every requirement, with Kubernetes' semantics (`!=` and `notin` hold for a missing key). */
export function matchesLabels(requirements: LabelRequirement[], labels: Record<string, unknown> | undefined): boolean {
  const has = (key: string) => labels !== undefined && Object.hasOwn(labels, key) && typeof labels[key] === 'string';
  return requirements.every(({ op, key, values }) => {
    const value = has(key) ? (labels![key] as string) : undefined;
    switch (op) {
      case '=':
        return value === values[0];
      case '!=':
        return value !== values[0];
      case 'in':
        return value !== undefined && values.includes(value);
      case 'notin':
        return value === undefined || !values.includes(value);
      case 'exists':
        return value !== undefined;
      case '!':
        return value === undefined;
    }
  });
}
