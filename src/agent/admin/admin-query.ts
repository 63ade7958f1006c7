/**
 * Query-string parsing for the admin endpoints: each endpoint declares the parameters it takes, and anything else —
 * an unknown parameter (a typo would otherwise silently match everything), a repeated one, a value of the wrong
 * shape — is an {@link AdminQueryError}, answered 400 `{error: "bad_request", message}`.
 */

/** A bad query string; `message` says which parameter and what is expected. */
export class AdminQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminQueryError';
  }
}

/** One accepted parameter. */
export type ParamSpec =
  | { type: 'string' }
  | { type: 'boolean' }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'integer'; min: number; max: number; default: number };

/** Parsed values: integers always present (defaulted), the others only when given. */
export type ParsedQuery<S extends Record<string, ParamSpec>> = {
  [K in keyof S]: S[K] extends { type: 'integer' } ? number : S[K] extends { type: 'boolean' } ? boolean | undefined : string | undefined;
};

/** `limit` (default 100, 1…1000) and `offset` (default 0) of the paged endpoints. */
export const PAGING = {
  limit: { type: 'integer', min: 1, max: 1000, default: 100 },
  offset: { type: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER, default: 0 },
} as const satisfies Record<string, ParamSpec>;

/** Parses `query` against `spec`. Throws {@link AdminQueryError}. */
export function parseQuery<S extends Record<string, ParamSpec>>(query: URLSearchParams, spec: S): ParsedQuery<S> {
  const out: Record<string, unknown> = {};
  const allowed = Object.keys(spec);
  const seen = new Set<string>();
  for (const [name, raw] of query) {
    const param = spec[name];
    if (param === undefined) {
      throw new AdminQueryError(
        allowed.length === 0
          ? `unknown query parameter "${name}": this endpoint takes none`
          : `unknown query parameter "${name}"; expected ${allowed.join(', ')}`,
      );
    }
    if (seen.has(name)) throw new AdminQueryError(`query parameter "${name}" is given more than once`);
    seen.add(name);
    out[name] = parseValue(name, raw, param);
  }
  for (const [name, param] of Object.entries(spec)) {
    if (param.type === 'integer' && out[name] === undefined) out[name] = param.default;
  }
  return out as ParsedQuery<S>;
}

function parseValue(name: string, raw: string, param: ParamSpec): unknown {
  switch (param.type) {
    case 'string':
      return raw;
    case 'boolean':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw new AdminQueryError(`${name} must be true or false, got "${raw}"`);
    case 'enum':
      if (param.values.includes(raw)) return raw;
      throw new AdminQueryError(`${name} must be one of ${param.values.join(', ')}, got "${raw}"`);
    case 'integer': {
      const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(value) || value < param.min || value > param.max) {
        throw new AdminQueryError(
          `${name} must be an integer from ${param.min} to ${param.max === Number.MAX_SAFE_INTEGER ? 'any' : param.max}, got "${raw}"`,
        );
      }
      return value;
    }
  }
}

/** One page of `items` with the paging echoed back: `{items, total, limit, offset}`. */
export function page<T>(
  items: readonly T[],
  paging: { limit: number; offset: number },
): { items: T[]; total: number; limit: number; offset: number } {
  return {
    items: items.slice(paging.offset, paging.offset + paging.limit),
    total: items.length,
    limit: paging.limit,
    offset: paging.offset,
  };
}
