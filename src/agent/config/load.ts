/**
 * Loads the agent configuration: YAML file → environment overrides → schema validation → identity defaults.
 * Every problem becomes one {@link AgentConfigError} naming the key path, so the CLI can print it and exit non-zero.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { type ConfigPathKey, resolveConfigPaths } from '../../shared/config-paths.js';
import { AGENT_DEFAULTS } from './defaults.js';
import { agentConfigSchema, type AgentConfig } from './schema.js';

/** One problem found in the configuration. `path` is dotted (`kubernetes.accounts[0].name`), empty for the root. */
export interface AgentConfigIssue {
  path: string;
  message: string;
}

/** A configuration that cannot be used. The message lists every issue; nothing was started. */
export class AgentConfigError extends Error {
  readonly issues: AgentConfigIssue[];
  constructor(source: string, issues: AgentConfigIssue[]) {
    const lines = issues.map((i) => `  - ${i.path === '' ? '(root)' : i.path}: ${i.message}`);
    super(`invalid agent configuration (${source}):\n${lines.join('\n')}`);
    this.name = 'AgentConfigError';
    this.issues = issues;
  }
}

/**
 * Environment variables that override top-level values (applied before validation, so a bad value is reported under
 * the key it overrides). Names are `OUTPOST_AGENT_<NAME>`.
 */
export const AGENT_ENV_OVERRIDES: ReadonlyArray<{ env: string; path: string[]; type: 'string' | 'boolean' | 'number' }> = [
  { env: 'OUTPOST_AGENT_GRPC', path: ['clouddriver', 'grpc'], type: 'string' },
  { env: 'OUTPOST_AGENT_TOKEN', path: ['clouddriver', 'auth', 'token'], type: 'string' },
  { env: 'OUTPOST_AGENT_TOKEN_FILE', path: ['clouddriver', 'auth', 'tokenFile'], type: 'string' },
  { env: 'OUTPOST_AGENT_INSECURE', path: ['clouddriver', 'insecure'], type: 'boolean' },
  { env: 'OUTPOST_AGENT_ID', path: ['agent', 'id'], type: 'string' },
  { env: 'OUTPOST_AGENT_ZONE', path: ['agent', 'zone'], type: 'string' },
  { env: 'OUTPOST_AGENT_ADMIN_PORT', path: ['server', 'port'], type: 'number' },
  { env: 'OUTPOST_AGENT_METRICS_PORT', path: ['prometheus', 'port'], type: 'number' },
  { env: 'OUTPOST_AGENT_LOG_LEVEL', path: ['logging', 'level'], type: 'string' },
];

/**
 * Every path-valued key of the agent configuration: relative ones (from the file or an `OUTPOST_AGENT_*` variable)
 * are resolved against the config file's directory. `kubernetes.dynamicKubeconfigDirs` is resolved the same way, and
 * defaults to that directory.
 */
export const AGENT_PATH_KEYS: readonly ConfigPathKey[] = [
  { path: ['clouddriver', 'auth', 'tokenFile'] },
  { path: ['clouddriver', 'tls', 'cacertFile'] },
  { path: ['clouddriver', 'tls', 'clientCertFile'] },
  { path: ['clouddriver', 'tls', 'clientKeyFile'] },
  { path: ['kubernetes', 'accounts', '*', 'kubeconfigFile'] },
];

/** Formats a zod issue path the way users write keys: `a.b[0].c`. */
export function formatIssuePath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

function issuesFromZod(error: z.ZodError): AgentConfigIssue[] {
  return error.issues.map((issue) => {
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') {
      message = `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    }
    return { path: formatIssuePath(issue.path), message };
  });
}

function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  for (const override of AGENT_ENV_OVERRIDES) {
    const text = env[override.env];
    if (text === undefined || text === '') continue;
    let value: unknown = text;
    if (override.type === 'boolean') value = text === 'true' ? true : text === 'false' ? false : text;
    if (override.type === 'number') value = /^\d+$/.test(text) ? Number(text) : text;
    let node = raw;
    for (const key of override.path.slice(0, -1)) {
      const next = node[key];
      if (next === undefined || next === null) node[key] = {};
      else if (typeof next !== 'object' || Array.isArray(next)) break;
      node = node[key] as Record<string, unknown>;
    }
    node[override.path[override.path.length - 1]!] = value;
  }
}

/**
 * Validates an already-parsed configuration object (from YAML or code) with environment overrides, and fills the
 * identity defaults (`agent.id` from POD_NAME or the hostname, `agent.zone` from POD_NAMESPACE or 'default').
 * Relative paths ({@link AGENT_PATH_KEYS}, environment overrides included) are resolved against `baseDir` when given.
 * Throws {@link AgentConfigError}.
 */
export function parseAgentConfig(
  raw: unknown,
  env: NodeJS.ProcessEnv = process.env,
  options: { source?: string; baseDir?: string } = {},
): AgentConfig {
  const source = options.source ?? 'configuration';
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new AgentConfigError(source, [{ path: '', message: 'expected a YAML mapping at the top level' }]);
  }
  const copy = structuredClone(raw) as Record<string, unknown>;
  applyEnvOverrides(copy, env);
  const result = agentConfigSchema.safeParse(copy);
  if (!result.success) throw new AgentConfigError(source, issuesFromZod(result.error));
  const config = result.data;
  config.agent.id ??= env.POD_NAME || hostname();
  config.agent.zone ??= env.POD_NAMESPACE || AGENT_DEFAULTS.zone;
  if (options.baseDir !== undefined) {
    resolveConfigPaths(config, AGENT_PATH_KEYS, options.baseDir);
    // Dynamic accounts' kubeconfigs: under the config file's directory unless the file names others.
    config.kubernetes.dynamicKubeconfigDirs = (config.kubernetes.dynamicKubeconfigDirs ?? [options.baseDir]).map((d) =>
      resolve(options.baseDir!, d),
    );
  } else if (config.kubernetes.dynamicKubeconfigDirs !== undefined) {
    config.kubernetes.dynamicKubeconfigDirs = config.kubernetes.dynamicKubeconfigDirs.map((d) => resolve(d));
  }
  return config;
}

/**
 * Reads and validates the YAML configuration file. Throws {@link AgentConfigError} for a missing file, bad YAML or
 * an invalid key; the caller prints `err.message` (no stack) and exits non-zero.
 */
export function loadAgentConfig(file: string, env: NodeJS.ProcessEnv = process.env): AgentConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new AgentConfigError(file, [{ path: '', message: `cannot read file: ${(err as Error).message}` }]);
  }
  return parseAgentConfigText(text, file, env);
}

/** Validates the YAML text of the configuration file `file` (already read). Throws {@link AgentConfigError}. */
export function parseAgentConfigText(text: string, file: string, env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new AgentConfigError(
      file,
      doc.errors.map((e) => ({ path: '', message: `YAML syntax: ${e.message.split('\n')[0]}` })),
    );
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (err) {
    // the yaml library refuses alias bombs ("Excessive alias count…") and undefined aliases while building the value
    throw new AgentConfigError(file, [{ path: '', message: `YAML syntax: ${(err as Error).message.split('\n')[0]}` }]);
  }
  return parseAgentConfig(value, env, { source: file, baseDir: dirname(resolve(file)) });
}
