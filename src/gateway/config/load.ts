/**
 * Loads the gateway configuration from (lowest to highest precedence) the defaults, a YAML file,
 * `OUTPOST_GATEWAY_<KEY>` environment variables and explicit overrides (CLI flags), and validates it against
 * ./schema.ts.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { resolveConfigPaths } from '../../shared/config-paths.js';
import { GATEWAY_PATH_KEYS } from './paths.js';
import { baseSchema, type GatewayConfig, type GatewayConfigInput, gatewayConfigSchema } from './schema.js';

/** Thrown when the configuration is invalid; the message names every bad key and its problem. */
export class GatewayConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GatewayConfigError';
  }
}

/** Options for {@link loadGatewayConfig}. */
export interface LoadGatewayConfigOptions {
  /**
   * YAML file; missing or unreadable files are an error. Relative paths in it and in `env` are resolved against its
   * directory (./paths.ts lists the keys).
   */
  file?: string;
  /** Environment to read `OUTPOST_GATEWAY_*` from; defaults to none (pass `process.env` explicitly). */
  env?: NodeJS.ProcessEnv;
  /** Highest-precedence values (CLI flags); undefined entries are ignored, relative paths stay as given. */
  overrides?: GatewayConfigInput;
}

/**
 * Builds the configuration from defaults < file < env < overrides and validates it. Relative paths from the file and
 * the environment are made absolute under the file's directory; the overrides' stay relative to the working directory.
 * Throws {@link GatewayConfigError} naming the key and the problem when anything is invalid.
 */
export function loadGatewayConfig(opts: LoadGatewayConfigOptions = {}): GatewayConfig {
  let merged: Record<string, unknown> = {};
  // Where relative paths of the file and the environment point from: the file's directory, as for the agent.
  const baseDir = opts.file ? dirname(resolve(opts.file)) : undefined;
  const withPaths = (source: Record<string, unknown>) => {
    if (baseDir !== undefined) resolveConfigPaths(source, GATEWAY_PATH_KEYS, baseDir);
    return source;
  };
  if (opts.file) merged = deepMerge(merged, withPaths(withoutAliases(readConfigFile(opts.file), `config file ${opts.file}`)));
  if (opts.env) merged = deepMerge(merged, withPaths(configFromEnv(opts.env)));
  if (opts.overrides) merged = deepMerge(merged, withoutAliases(opts.overrides as Record<string, unknown>, 'the overrides'));
  const result = gatewayConfigSchema.safeParse(merged);
  if (!result.success) {
    const problems = result.error.issues.map((i) => {
      const key = i.path.length > 0 ? i.path.join('.') : '(root)';
      return `${key}: ${i.message}`;
    });
    throw new GatewayConfigError(`invalid gateway configuration: ${problems.join('; ')}`);
  }
  return result.data;
}

/** Environment variable names for every key: `agents.deadAfterSeconds` → `OUTPOST_GATEWAY_AGENTS_DEAD_AFTER_SECONDS`. */
export function gatewayEnvVariables(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const walk = (shape: Record<string, unknown>, prefix: string[]) => {
    for (const [key, value] of Object.entries(shape)) {
      const path = [...prefix, key];
      const inner = unwrapObject(value);
      if (inner) walk(inner, path);
      else if (!isArraySchema(value)) out.set(`OUTPOST_GATEWAY_${path.map(snakeUpper).join('_')}`, path);
    }
  };
  walk(baseSchema.shape as Record<string, unknown>, []);
  return out;
}

/**
 * Old top-level keys still accepted, with the key that replaced them: `cluster` was the replica set's section before
 * it was named `replicas` (in the rest of Outpost a cluster is a Kubernetes cluster). Also as environment variables:
 * `OUTPOST_GATEWAY_CLUSTER_<KEY>` sets `replicas.<key>`.
 */
export const GATEWAY_CONFIG_ALIASES: Readonly<Record<string, string>> = { cluster: 'replicas' };

/** Moves aliased sections to their current key; naming both in one source is an error (which one would win is unclear). */
function withoutAliases(source: Record<string, unknown>, where: string): Record<string, unknown> {
  const out = { ...source };
  for (const [alias, key] of Object.entries(GATEWAY_CONFIG_ALIASES)) {
    if (!Object.hasOwn(out, alias)) continue;
    if (Object.hasOwn(out, key)) {
      throw new GatewayConfigError(
        `invalid gateway configuration: ${where} sets both \`${alias}\` and \`${key}\`; \`${alias}\` is the old name of \`${key}\`: keep only \`${key}\``,
      );
    }
    out[key] = out[alias];
    delete out[alias];
  }
  return out;
}

function configFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, path] of gatewayEnvVariables()) {
    const alias = Object.entries(GATEWAY_CONFIG_ALIASES).find(([, key]) => key === path[0])?.[0];
    const aliasName = alias === undefined ? undefined : `OUTPOST_GATEWAY_${[alias, ...path.slice(1)].map(snakeUpper).join('_')}`;
    const value = nonEmpty(env[name]);
    const aliasValue = aliasName === undefined ? undefined : nonEmpty(env[aliasName]);
    if (value !== undefined && aliasValue !== undefined) {
      throw new GatewayConfigError(
        `invalid gateway configuration: the environment sets both ${aliasName} and ${name}; \`${alias}\` is the old name of \`${path[0]}\`: keep only ${name}`,
      );
    }
    const chosen = value ?? aliasValue;
    if (chosen === undefined) continue;
    let target = out;
    for (const key of path.slice(0, -1)) target = (target[key] ??= {}) as Record<string, unknown>;
    target[path[path.length - 1]!] = chosen;
  }
  return out;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new GatewayConfigError(`cannot read gateway config file ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (err) {
    throw new GatewayConfigError(`gateway config file ${file} is not valid YAML: ${(err as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new GatewayConfigError(`gateway config file ${file} must hold a mapping of keys`);
  }
  return parsed as Record<string, unknown>;
}

function unwrapObject(schema: unknown): Record<string, unknown> | undefined {
  let s = schema as { def?: { type?: string; innerType?: unknown; shape?: Record<string, unknown> } };
  while (s?.def && (s.def.type === 'default' || s.def.type === 'optional')) s = s.def.innerType as typeof s;
  return s?.def?.type === 'object' ? s.def.shape : undefined;
}

function isArraySchema(schema: unknown): boolean {
  let s = schema as { def?: { type?: string; innerType?: unknown } };
  while (s?.def && (s.def.type === 'default' || s.def.type === 'optional')) s = s.def.innerType as typeof s;
  return s?.def?.type === 'array';
}

function snakeUpper(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const prev = out[key];
    if (isPlainObject(value) && isPlainObject(prev)) out[key] = deepMerge(prev, value);
    else out[key] = value;
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
