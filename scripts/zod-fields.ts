/**
 * Reads a zod 4 object schema into documentation rows: one per key, with its type, default, bounds and description,
 * nested objects and lists of objects as their own sections. It looks only at what the schemas declare (their `def`
 * and `.describe()` texts), so the reference it feeds cannot drift from the parser.
 */

/** The parts of a zod 4 schema this reader uses. */
interface ZodLike {
  description?: string;
  _zod: { def: Def };
}
interface Def {
  type: string;
  innerType?: ZodLike;
  in?: ZodLike;
  out?: ZodLike;
  shape?: Record<string, ZodLike>;
  element?: ZodLike;
  valueType?: ZodLike;
  options?: ZodLike[];
  entries?: Record<string, string>;
  values?: unknown[];
  defaultValue?: unknown;
  coerce?: boolean;
  format?: string;
  checks?: { _zod: { def: CheckDef } }[];
}
interface CheckDef {
  check: string;
  value?: number;
  inclusive?: boolean;
  format?: string;
  minimum?: number;
  maximum?: number;
}

/** One documented key. */
interface FieldRow {
  /** Dotted path from the root; list items are written `key[]`. */
  path: string;
  /** The key itself. */
  key: string;
  type: string;
  /** The default as YAML would show it; undefined when there is none. */
  default?: string;
  description?: string;
  /** A key accepted and ignored (any value). */
  ignored: boolean;
}

/** One object of the configuration: its path (`''` for the root) and description, and its keys. */
export interface FieldSection {
  path: string;
  description?: string;
  rows: FieldRow[];
}

const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch']);

/** Strips optional/default/prefault wrappers and pipes (to their input side), collecting the first description and default. */
function unwrap(schema: ZodLike): { core: ZodLike; description?: string; defaultValue?: unknown; hasDefault: boolean } {
  let current = schema;
  let description = schema.description;
  let defaultValue: unknown;
  let hasDefault = false;
  for (;;) {
    const def = current._zod.def;
    if ((def.type === 'default' || def.type === 'prefault') && !hasDefault) {
      defaultValue = def.defaultValue;
      hasDefault = true;
    }
    let next: ZodLike | undefined;
    if (WRAPPERS.has(def.type)) next = def.innerType;
    // z.preprocess(fn, schema) is pipe(transform, schema): the schema is the out side; schema.transform(fn) is
    // pipe(schema, transform): the schema is the in side.
    else if (def.type === 'pipe') next = def.in?._zod.def.type === 'transform' ? def.out : def.in;
    if (!next) break;
    current = next;
    description ??= current.description;
  }
  return { core: current, description, defaultValue, hasDefault };
}

function bounds(def: Def): string {
  const parts: string[] = [];
  let integer = false;
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === 'number_format' && (c.format === 'safeint' || c.format === 'int32')) integer = true;
    if (c.check === 'greater_than') parts.push(`${c.inclusive ? '≥' : '>'} ${c.value}`);
    if (c.check === 'less_than') parts.push(`${c.inclusive ? '≤' : '<'} ${c.value}`);
  }
  return `${integer ? 'integer' : 'number'}${parts.length > 0 ? ` ${parts.join(', ')}` : ''}`;
}

/** A short human type: `integer ≥ 1, ≤ 10000`, `one of \`a\`, \`b\``, `list of string`… */
function typeName(schema: ZodLike): string {
  const { core } = unwrap(schema);
  const def = core._zod.def;
  switch (def.type) {
    case 'string':
      return def.format === 'url' ? 'URL' : 'string';
    case 'number':
      return bounds(def);
    case 'boolean':
      return 'boolean';
    case 'enum':
      return `one of ${Object.values(def.entries ?? {})
        .map((v) => `\`${v}\``)
        .join(', ')}`;
    case 'literal':
      return (def.values ?? []).map((v) => `\`${String(v)}\``).join(' | ');
    case 'array':
      return `list of ${typeName(def.element!)}`;
    case 'record':
      return `map of string → ${typeName(def.valueType!)}`;
    case 'union':
      return (def.options ?? []).map((o) => (unwrap(o).core._zod.def.type === 'object' ? 'object' : typeName(o))).join(' or ');
    case 'object':
      return 'object';
    case 'unknown':
    case 'any':
      return 'any';
    default:
      return def.type;
  }
}

function formatDefault(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value === '' ? '""' : value;
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0) return undefined;
  return JSON.stringify(value);
}

/**
 * Every section of an object schema, depth first: the root's keys, then each nested object (`agents`, `auth.jwt`) and
 * each list of objects (`auth.tokens[]`) in key order.
 */
export function describeObject(schema: unknown, path = '', description?: string): FieldSection[] {
  const { core } = unwrap(schema as ZodLike);
  const shape = core._zod.def.shape;
  if (core._zod.def.type !== 'object' || !shape) throw new Error(`${path || 'root'}: not an object schema (${core._zod.def.type})`);
  const section: FieldSection = { path, description, rows: [] };
  const nested: FieldSection[] = [];
  for (const [key, child] of Object.entries(shape)) {
    const keyPath = path === '' ? key : `${path}.${key}`;
    const info = unwrap(child);
    const def = info.core._zod.def;
    const ignored = def.type === 'unknown' || def.type === 'any';
    section.rows.push({
      path: keyPath,
      key,
      type: typeName(child),
      default: info.hasDefault && def.type !== 'object' ? formatDefault(info.defaultValue) : undefined,
      description: info.description,
      ignored,
    });
    if (def.type === 'object') nested.push(...describeObject(child, keyPath, info.description));
    if (def.type === 'array' && unwrap(def.element!).core._zod.def.type === 'object') {
      nested.push(...describeObject(def.element!, `${keyPath}[]`, info.description));
    }
    if (def.type === 'union') {
      for (const option of def.options ?? []) {
        if (unwrap(option).core._zod.def.type === 'object')
          nested.push(...describeObject(option, `${keyPath} (object form)`, info.description));
      }
    }
  }
  return [section, ...nested];
}
