/**
 * Gateway configuration: one zod schema holding every default, loaded from (lowest to highest precedence) the
 * defaults, a YAML file, `OUTPOST_GATEWAY_<KEY>` environment variables and explicit overrides (CLI flags).
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const positiveSeconds = z.coerce.number().positive().max(86_400);

const agentsSchema = z
  .object({
    /** How often the gateway sends a heartbeat on each agent stream (fractions allowed, for tests). */
    heartbeatIntervalSeconds: positiveSeconds.default(10),
    /** A stream silent for this long is closed with DEADLINE_EXCEEDED and its accounts become INACTIVE. */
    deadAfterSeconds: positiveSeconds.default(30),
    /** Largest number of unacknowledged data messages an agent may have in flight (sent in the Welcome). */
    maxUnacked: z.coerce.number().int().min(1).max(10_000).default(32),
  })
  .strict();

const cacheSchema = z
  .object({
    /** Resume points older than this are not offered: the agent re-lists instead. */
    resumeMaxAgeSeconds: z.coerce.number().int().min(0).max(30 * 86_400).default(300),
  })
  .strict();

const operationsSchema = z
  .object({
    /** Timeout of an operation that names none. */
    defaultTimeoutSeconds: z.coerce.number().positive().max(3600).default(30),
    /** How long an operation waits for an agent serving its account before it fails (fractions allowed, for tests). */
    agentWaitSeconds: z.coerce.number().positive().max(3600).default(10),
    /** How often the sweeper times out operations past their deadline (all rows, whichever replica received them). */
    sweepIntervalMs: z.coerce.number().int().min(10).max(60_000).default(1000),
    /** Largest `apply.manifests` text accepted at submit (bytes of UTF-8). */
    maxManifestBytes: z.coerce.number().int().min(1).max(4 * 1024 * 1024).default(1024 * 1024),
  })
  .strict();

const baseSchema = z
  .object({
    /** Replica id; defaults to `${hostname}-${httpPort}`, or a random id when the HTTP port is ephemeral. */
    id: z.string().trim().min(1).max(253).optional(),
    host: z.string().min(1).default('0.0.0.0'),
    /** HTTP/1.1 port (Connect JSON, REST); 0 picks an ephemeral port. */
    httpPort: port.default(7002),
    /** Cleartext HTTP/2 (h2c) port for gRPC agents and clients; 0 picks an ephemeral port. */
    grpcPort: port.default(9091),
    /** `postgres://…`, a directory for embedded PGlite, or `memory://`. */
    database: z.string().min(1).default('.outpost/db'),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    agents: agentsSchema.default(() => agentsSchema.parse({})),
    cache: cacheSchema.default(() => cacheSchema.parse({})),
    operations: operationsSchema.default(() => operationsSchema.parse({})),
    /** URL other replicas and clients reach this one at (for /armory/clouddrivers); defaults to the HTTP URL. */
    baseUrl: z.url().optional(),
  })
  .strict();

/** The resolved gateway configuration. */
export interface GatewayConfig {
  id: string;
  host: string;
  httpPort: number;
  grpcPort: number;
  database: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  agents: { heartbeatIntervalSeconds: number; deadAfterSeconds: number; maxUnacked: number };
  cache: { resumeMaxAgeSeconds: number };
  operations: { defaultTimeoutSeconds: number; agentWaitSeconds: number; sweepIntervalMs: number; maxManifestBytes: number };
  baseUrl?: string;
}

/** What a config file, the environment or overrides may hold: any subset of {@link GatewayConfig}. */
export type GatewayConfigInput = Partial<Omit<GatewayConfig, 'agents' | 'cache' | 'operations'>> & {
  agents?: Partial<GatewayConfig['agents']>;
  cache?: Partial<GatewayConfig['cache']>;
  operations?: Partial<GatewayConfig['operations']>;
};

/** The schema of {@link GatewayConfig}; every default lives here. Parse errors name the offending key. */
export const gatewayConfigSchema: z.ZodType<GatewayConfig> = baseSchema
  .superRefine((c, ctx) => {
    if (c.agents.deadAfterSeconds <= c.agents.heartbeatIntervalSeconds) {
      ctx.addIssue({
        code: 'custom',
        path: ['agents', 'deadAfterSeconds'],
        message: `must be greater than agents.heartbeatIntervalSeconds (${c.agents.heartbeatIntervalSeconds})`,
      });
    }
  })
  .transform((c) => ({
    ...c,
    id: c.id ?? (c.httpPort === 0 ? `gateway-${randomBytes(4).toString('hex')}` : `${hostname()}-${c.httpPort}`),
  }));

/** Thrown when the configuration is invalid; the message names every bad key and its problem. */
export class GatewayConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GatewayConfigError';
  }
}

/** Options for {@link loadGatewayConfig}. */
export interface LoadGatewayConfigOptions {
  /** YAML file; missing or unreadable files are an error. */
  file?: string;
  /** Environment to read `OUTPOST_GATEWAY_*` from; defaults to none (pass `process.env` explicitly). */
  env?: NodeJS.ProcessEnv;
  /** Highest-precedence values (CLI flags); undefined entries are ignored. */
  overrides?: GatewayConfigInput;
}

/**
 * Builds the configuration from defaults < file < env < overrides and validates it.
 * Throws {@link GatewayConfigError} naming the key and the problem when anything is invalid.
 */
export function loadGatewayConfig(opts: LoadGatewayConfigOptions = {}): GatewayConfig {
  let merged: Record<string, unknown> = {};
  if (opts.file) merged = deepMerge(merged, readConfigFile(opts.file));
  if (opts.env) merged = deepMerge(merged, configFromEnv(opts.env));
  if (opts.overrides) merged = deepMerge(merged, opts.overrides as Record<string, unknown>);
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
      else out.set(`OUTPOST_GATEWAY_${path.map(snakeUpper).join('_')}`, path);
    }
  };
  walk(baseSchema.shape as Record<string, unknown>, []);
  return out;
}

function configFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, path] of gatewayEnvVariables()) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    let target = out;
    for (const key of path.slice(0, -1)) target = (target[key] ??= {}) as Record<string, unknown>;
    target[path[path.length - 1]!] = value;
  }
  return out;
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
