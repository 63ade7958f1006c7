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
    heartbeatIntervalSeconds: positiveSeconds
      .default(10)
      .describe('How often the gateway sends a heartbeat on each agent stream (fractions allowed, for tests).'),
    deadAfterSeconds: positiveSeconds
      .default(30)
      .describe('A stream silent for this long is closed with DEADLINE_EXCEEDED and its accounts become INACTIVE.'),
    maxUnacked: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(32)
      .describe('Largest number of unacknowledged data messages an agent may have in flight (sent in the Welcome).'),
    maxStreamAgeSeconds: positiveSeconds
      .default(7200)
      .describe(
        'The gateway closes each agent stream after this long, jittered by ±10% so a fleet does not reconnect at ' +
          'once; the agent reconnects at once and resumes its session (spreads agents over replicas behind a load ' +
          'balancer). Fractions allowed, for tests.',
      ),
  })
  .strict();

const cacheSchema = z
  .object({
    resumeMaxAgeSeconds: z.coerce
      .number()
      .int()
      .min(0)
      .max(30 * 86_400)
      .default(300)
      .describe('Resume points older than this are not offered: the agent re-lists instead.'),
  })
  .strict();

const operationsSchema = z
  .object({
    defaultTimeoutSeconds: z.coerce.number().positive().max(3600).default(30).describe('Timeout of an operation that names none.'),
    agentWaitSeconds: z.coerce
      .number()
      .positive()
      .max(3600)
      .default(10)
      .describe('How long an operation waits for an agent serving its account before it fails (fractions allowed, for tests).'),
    sweepIntervalMs: z.coerce
      .number()
      .int()
      .min(10)
      .max(60_000)
      .default(1000)
      .describe('How often the sweeper times out operations past their deadline (all rows, whichever replica received them).'),
    maxManifestBytes: z.coerce
      .number()
      .int()
      .min(1)
      .max(4 * 1024 * 1024)
      .default(1024 * 1024)
      .describe('Largest `apply.manifests` text accepted at submit (bytes of UTF-8).'),
  })
  .strict();

const limitsSchema = z
  .object({
    maxConcurrentStreams: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(100)
      .describe('HTTP/2 streams one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); an agent needs one.'),
    idleConnectionSeconds: z.coerce
      .number()
      .positive()
      .max(3600)
      .default(10)
      .describe(
        'A connection that has not completed TLS and sent a request within this time — or whose last request was ' +
          'refused and that sends nothing more — is closed, until one of its requests is admitted.',
      ),
    maxUnauthenticatedConnections: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(1000)
      .describe('Connections (both ports together) that have had no request admitted yet; beyond it, new connections are closed at once.'),
    maxRefusedRequestsPerConnection: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(100)
      .describe('Refused (unauthenticated or unauthorized) requests on a connection that has had none admitted, before it is closed.'),
  })
  .strict();

const secretsSchema = z
  .object({
    keyFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'File of AES-256 keys that encrypt Secret values inside stored operation requests: one `keyId:base64` line ' +
          'per key (32 random bytes each, e.g. `echo "k1:$(openssl rand -base64 32)"`); the first line encrypts, every ' +
          'line decrypts (add a new first line to rotate, drop an old line once no open operation uses it). Re-read when ' +
          'it changes; the same file on every replica. Unset: with --insecure an ephemeral key (lost on restart); ' +
          'otherwise operations carrying Secret values are refused.',
      ),
  })
  .strict();

const regex = z
  .string()
  .min(1)
  .refine((source) => {
    try {
      new RegExp(source);
      return true;
    } catch {
      return false;
    }
  }, 'not a valid regular expression');

/** Certificate subject attribute name (`CN`, `O`, `OU`, … or a dotted OID) → anchored regex over its value. */
const attributeMatchers = z
  .record(z.string().regex(/^([A-Za-z][A-Za-z0-9-]*|[0-9]+(\.[0-9]+)+)$/, 'an attribute name like CN, O, OU or an OID'), regex)
  .refine((m) => Object.keys(m).length > 0, 'name at least one attribute');

const tlsSchema = z
  .object({
    certFile: z.string().min(1).describe('PEM certificate (chain) served on both ports. Re-read when the file changes.'),
    keyFile: z.string().min(1).describe('PEM private key of certFile. Re-read when the file changes.'),
    caFile: z
      .string()
      .min(1)
      .optional()
      .describe('PEM CA bundle that client certificates must chain to (needed unless clientAuth is NONE).'),
    clientAuth: z
      .enum(['NONE', 'OPTIONAL', 'REQUIRE'])
      .default('NONE')
      .describe('NONE: no client certificate asked; OPTIONAL: verified when presented; REQUIRE: every connection must present ' + 'one.'),
    subjectFilters: z
      .array(z.union([regex, z.object({ attributes: attributeMatchers }).strict()]))
      .default([])
      .describe(
        'Client certificate subject filters; any match admits, empty admits all. A string is a regular expression over ' +
          'the RFC 4514 subject (`CN=agent-1,O=Example`, special characters in values escaped: `CN=a\\,O=b`); ' +
          '`{attributes: {CN: "agent-.*", O: "agents"}}` matches parsed attributes (each an anchored regex, all must ' +
          'match) and is the safer form.',
      ),
    reloadIntervalSeconds: positiveSeconds.default(5).describe('How often the certificate, key and CA files are checked for changes.'),
  })
  .strict()
  .refine((t) => t.clientAuth === 'NONE' || t.caFile !== undefined, {
    message: 'caFile is required when clientAuth is OPTIONAL or REQUIRE',
    path: ['caFile'],
  });

const staticTokenSchema = z
  .object({
    subject: z.string().min(1).max(253).describe('Identity the token authenticates as; authorization rules match it.'),
    token: z.string().min(16).optional().describe('The token itself (prefer tokenFile or tokenEnv: config files get copied around).'),
    tokenFile: z.string().min(1).optional().describe('File holding the token (surrounding whitespace ignored); re-read when it changes.'),
    tokenEnv: z.string().min(1).optional().describe('Environment variable holding the token.'),
  })
  .strict()
  .refine((t) => [t.token, t.tokenFile, t.tokenEnv].filter((v) => v !== undefined).length === 1, {
    message: 'set exactly one of token, tokenFile, tokenEnv',
  });

const jwtSchema = z
  .object({
    issuer: z.string().min(1).describe('Expected `iss`.'),
    audience: z.string().min(1).describe('Expected `aud`.'),
    secretFile: z.string().min(1).optional().describe('HMAC secret (HS256/384/512) in a file; or use publicKeyFile.'),
    publicKeyFile: z.string().min(1).optional().describe('PEM public key (SPKI) for RS*, PS*, ES* or EdDSA tokens.'),
    algorithms: z.array(z.string().min(1)).optional().describe('Accepted algorithms; defaults to those the key type allows.'),
    subjectClaim: z.string().min(1).default('sub').describe('Claim whose value is the subject.'),
    clockToleranceSeconds: z.coerce.number().int().min(0).max(600).default(30).describe('Allowed clock skew for exp/nbf.'),
    maxLifetimeSeconds: z.coerce
      .number()
      .int()
      .min(60)
      .max(31_536_000)
      .default(86_400)
      .describe(
        'Longest accepted token lifetime, `exp - iat` (or `exp - now` without `iat`); longer-lived tokens are refused. ' +
          "Every token must carry `exp`. Default 24 h: long enough for a workday's operator token and for agent tokens " +
          'rotated daily, short enough that a leaked token dies the same day.',
      ),
  })
  .strict()
  .refine((j) => (j.secretFile === undefined) !== (j.publicKeyFile === undefined), {
    message: 'set exactly one of secretFile, publicKeyFile',
  });

const authSchema = z
  .object({
    tokens: z.array(staticTokenSchema).default([]).describe('Static bearer tokens.'),
    jwt: jwtSchema.optional().describe('Signed JWT bearer tokens.'),
    replicaSecretFile: z
      .string()
      .min(1)
      .optional()
      .describe('File holding the secret replicas sign their internal tokens with (the same file on every replica).'),
    readAccess: z
      .enum(['authenticated', 'open'])
      .default('authenticated')
      .describe(
        'Who may call read routes (object, account and operation reads): `authenticated` principals with the read ' +
          'role, or `open` to anyone.',
      ),
  })
  .strict();

const identityKindSchema = z.enum(['token', 'jwt', 'certificate'], {
  message:
    'kind is required: set kind: token (auth.tokens subjects), jwt (JWT subject claims) or certificate (client ' +
    'certificate subjects); a rule meant for several kinds becomes one rule per kind',
});

const roleSchema = z.enum(['agent', 'read', 'write', 'admin', 'replica', 'spinnaker']);

const ruleSchema = z
  .object({
    kind: identityKindSchema.describe(
      'Which identities the rule applies to: `token` (auth.tokens), `jwt` (auth.jwt subject claim) or `certificate` ' +
        '(client certificate subject). Kinds are separate namespaces: a JWT with `sub: admin` never matches a token rule.',
    ),
    subject: regex
      .optional()
      .describe(
        'Regular expression over the subject within that kind (token subject, JWT claim, or the RFC 4514 certificate ' +
          'subject with escaped values); anchored by you. Set subject, attributes (certificates) or both.',
      ),
    attributes: attributeMatchers
      .optional()
      .describe(
        'kind certificate only: anchored regular expressions per subject attribute (`{CN: "agent-.*", O: "agents"}`); ' +
          "all must match one of the attribute's values.",
      ),
    roles: z
      .array(roleSchema)
      .min(1)
      .describe(
        'agent: may open agent streams; read: read routes; write: submit operations; admin: manage accounts; replica: ' +
          'internal routes; spinnaker: the Clouddriver API Orca and Gate call (docs/spinnaker.md).',
      ),
    accounts: z
      .array(z.string().min(1))
      .default([])
      .describe('With the agent role: glob patterns (`*` any run of characters) of the account names the agent may register.'),
  })
  .strict()
  .refine((r) => r.subject !== undefined || r.attributes !== undefined, { message: 'set subject, attributes or both' })
  .refine((r) => r.attributes === undefined || r.kind === 'certificate', {
    message: 'attributes apply to kind certificate only',
    path: ['attributes'],
  });

const authorizationSchema = z
  .object({
    rules: z
      .array(ruleSchema)
      .default([])
      .describe('Every rule whose subject matches applies; roles and account patterns add up. No rule matches: no rights.'),
  })
  .strict();

const accountsSchema = z
  .object({
    activationTimeoutSeconds: positiveSeconds
      .default(60)
      .describe('An account pushed to agents (ACTIVATING) that no agent caches within this time becomes FAILED.'),
    cleanupGraceSeconds: positiveSeconds
      .default(600)
      .describe('An agent account without any agent for this long is removed with its cache (fractions allowed, for tests).'),
    maxBodyBytes: z.coerce
      .number()
      .int()
      .min(1024)
      .max(16 * 1024 * 1024)
      .default(1024 * 1024)
      .describe('Largest JSON body the account routes accept.'),
    maxPageSize: z.coerce.number().int().min(1).max(100_000).default(1000).describe('Largest `limit` of a page of accounts.'),
  })
  .strict();

const clusterSchema = z
  .object({
    discovery: z
      .enum(['database', 'kubernetes'])
      .default('database')
      .describe('How replicas find each other: `database` (heartbeat rows in the shared database) or `kubernetes` (Endpoints ' + 'watch).'),
    heartbeatIntervalSeconds: positiveSeconds
      .default(5)
      .describe(
        'database mode: how often this replica writes its heartbeat row and re-reads the others (fractions allowed, ' + 'for tests).',
      ),
    deadAfterSeconds: positiveSeconds
      .default(15)
      .describe('database mode: a replica whose heartbeat is older than this is dead and not listed.'),
    namespace: z
      .string()
      .min(1)
      .max(63)
      .optional()
      .describe("kubernetes mode: namespace of the gateway's Endpoints; default read from the service-account namespace file."),
    endpointsPrefix: z
      .string()
      .min(1)
      .max(253)
      .default('spin-clouddriver')
      .describe('kubernetes mode: only Endpoints whose name starts with this are replicas.'),
    portName: z.string().min(1).max(63).default('http').describe('kubernetes mode: the Endpoints port (by name) replicas serve HTTP on.'),
    kubeconfigFile: z
      .string()
      .min(1)
      .optional()
      .describe('kubernetes mode: kubeconfig file (out-of-cluster runs, tests); in-cluster service account when unset.'),
    context: z.string().min(1).optional().describe('kubernetes mode: context of kubeconfigFile; its current context when unset.'),
    leaseSeconds: positiveSeconds
      .default(15)
      .describe(
        "Length of an account ownership lease. The replica holding an agent's stream renews it every third of this; " +
          'when a replica dies, another takes the account over after at most this long (at once when the agent resumes ' +
          'its session elsewhere). Fractions allowed, for tests.',
      ),
    standbyCheckIntervalSeconds: positiveSeconds
      .default(1)
      .describe('How often each replica looks for accounts its STANDBY agents may take over (the caching agent went away).'),
    forwardTimeoutSeconds: positiveSeconds
      .default(5)
      .describe('How long forwarding an operation (or relaying its result) to another replica may take before another is tried.'),
    peerCaFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        "PEM CA bundle to verify other replicas' HTTPS certificates when forwarding; defaults to tls.caFile, then " + 'the system CAs.',
      ),
  })
  .strict();

const webSchema = z
  .object({
    enabled: z
      .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
      .default(true)
      .describe('Serve the dashboard at `/`. Its files hold no data: every call the page makes is authenticated like any ' + "client's."),
    dir: z
      .string()
      .min(1)
      .optional()
      .describe('Directory of the built dashboard (`npm run build`); default: `web/dist` of the installed package.'),
    fleetPollSeconds: z.coerce
      .number()
      .min(0.05)
      .max(60)
      .default(1)
      .describe('How often the summary behind FleetService.WatchFleet is re-read while someone watches it (fractions allowed).'),
  })
  .strict();

const baseSchema = z
  .object({
    id: z
      .string()
      .trim()
      .min(1)
      .max(253)
      .optional()
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the help text shows the pattern of the default id
      .describe('Replica id; defaults to `${hostname}-${httpPort}`, or a random id when the HTTP port is ephemeral.'),
    host: z.string().min(1).default('0.0.0.0').describe('Address both ports listen on.'),
    httpPort: port.default(7002).describe('HTTP/1.1 port (Connect JSON, REST); 0 picks an ephemeral port.'),
    grpcPort: port.default(9091).describe('Cleartext HTTP/2 (h2c) port for gRPC agents and clients; 0 picks an ephemeral port.'),
    database: z.string().min(1).default('.outpost/db').describe('`postgres://…`, a directory for embedded PGlite, or `memory://`.'),
    logLevel: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('Lowest level logged (JSON lines on stdout).'),
    agents: agentsSchema.default(() => agentsSchema.parse({})).describe('Agent streams: heartbeats, flow control, stream lifetime.'),
    cache: cacheSchema
      .default(() => cacheSchema.parse({}))
      .describe('The object cache and the resume points offered to reconnecting agents.'),
    operations: operationsSchema.default(() => operationsSchema.parse({})).describe('Operations (apply, delete, scale, …) sent to agents.'),
    baseUrl: z
      .url()
      .optional()
      .describe('URL other replicas and clients reach this one at (for /armory/clouddrivers); defaults to the HTTP URL.'),
    insecure: z
      .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
      .default(false)
      .describe(
        'Development only: requests without credentials are admitted with every right, and any agent may register any ' +
          'account name. Logged as a warning at start-up. Presented credentials are still verified.',
      ),
    tls: tlsSchema.optional().describe('TLS on both ports (HTTP/2 + HTTP/1.1 on the HTTP port, HTTP/2 on the gRPC port).'),
    auth: authSchema.default(() => authSchema.parse({})).describe('Bearer tokens (static or JWT), the replica secret and who may read.'),
    authorization: authorizationSchema
      .default(() => authorizationSchema.parse({}))
      .describe('Roles per identity (certificate subject, token subject or JWT subject claim).'),
    accounts: accountsSchema
      .default(() => accountsSchema.parse({}))
      .describe('Accounts: activation, clean-up of accounts without agents, REST limits.'),
    cluster: clusterSchema
      .default(() => clusterSchema.parse({}))
      .describe('How gateway replicas discover each other (for /armory/clouddrivers).'),
    web: webSchema.default(() => webSchema.parse({})).describe('The browser dashboard and the fleet summary it watches.'),
    limits: limitsSchema
      .default(() => limitsSchema.parse({}))
      .describe('What a peer may hold before it is authenticated: connections, HTTP/2 streams, idle time (see docs/security.md).'),
    secrets: secretsSchema
      .default(() => secretsSchema.parse({}))
      .describe('Encryption at rest of Secret values in operation requests (see docs/security.md).'),
  })
  .strict();

/** TLS settings of the gateway. */
export type GatewayTlsConfig = z.output<typeof tlsSchema>;
/** Authentication settings of the gateway. */
export type GatewayAuthConfig = z.output<typeof authSchema>;
/** One authorization rule. */
export type AuthorizationRule = z.output<typeof ruleSchema>;
/** A role an authorization rule grants. */
export type Role = z.output<typeof roleSchema>;

/** Replica discovery settings of the gateway. */
export type GatewayClusterConfig = z.output<typeof clusterSchema>;
/** Dashboard settings of the gateway. */
export type GatewayWebConfig = z.output<typeof webSchema>;
/** The resolved gateway configuration. */
export interface GatewayConfig {
  id: string;
  host: string;
  httpPort: number;
  grpcPort: number;
  database: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  agents: { heartbeatIntervalSeconds: number; deadAfterSeconds: number; maxUnacked: number; maxStreamAgeSeconds: number };
  cache: { resumeMaxAgeSeconds: number };
  operations: { defaultTimeoutSeconds: number; agentWaitSeconds: number; sweepIntervalMs: number; maxManifestBytes: number };
  baseUrl?: string;
  insecure: boolean;
  tls?: GatewayTlsConfig;
  auth: GatewayAuthConfig;
  authorization: { rules: AuthorizationRule[] };
  accounts: { activationTimeoutSeconds: number; cleanupGraceSeconds: number; maxBodyBytes: number; maxPageSize: number };
  cluster: GatewayClusterConfig;
  web: GatewayWebConfig;
  secrets: { keyFile?: string };
  limits: {
    maxConcurrentStreams: number;
    idleConnectionSeconds: number;
    maxUnauthenticatedConnections: number;
    maxRefusedRequestsPerConnection: number;
  };
}

/** What a config file, the environment or overrides may hold: any subset of {@link GatewayConfig}. */
export type GatewayConfigInput = Partial<
  Omit<
    GatewayConfig,
    'agents' | 'cache' | 'operations' | 'tls' | 'auth' | 'authorization' | 'accounts' | 'cluster' | 'web' | 'secrets' | 'limits'
  >
> & {
  secrets?: Partial<GatewayConfig['secrets']>;
  limits?: Partial<GatewayConfig['limits']>;
  agents?: Partial<GatewayConfig['agents']>;
  cache?: Partial<GatewayConfig['cache']>;
  operations?: Partial<GatewayConfig['operations']>;
  tls?: z.input<typeof tlsSchema>;
  auth?: z.input<typeof authSchema>;
  authorization?: z.input<typeof authorizationSchema>;
  accounts?: Partial<GatewayConfig['accounts']>;
  cluster?: Partial<GatewayClusterConfig>;
  web?: Partial<GatewayWebConfig>;
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
    if (c.cluster.deadAfterSeconds <= c.cluster.heartbeatIntervalSeconds) {
      ctx.addIssue({
        code: 'custom',
        path: ['cluster', 'deadAfterSeconds'],
        message: `must be greater than cluster.heartbeatIntervalSeconds (${c.cluster.heartbeatIntervalSeconds})`,
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
      else if (!isArraySchema(value)) out.set(`OUTPOST_GATEWAY_${path.map(snakeUpper).join('_')}`, path);
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
