/**
 * Gateway configuration schema: one zod schema holding every default (the security sections are in
 * ./security-schema.ts). ./load.ts reads it from the defaults, a YAML file, the environment and overrides.
 */
import { kubeSchema, type GatewayKubeConfig } from './kube-schema.js';
import { fiatSchema } from './fiat-schema.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  authSchema,
  authorizationSchema,
  limitsSchema,
  type ruleSchema,
  type roleSchema,
  secretsSchema,
  tlsSchema,
} from './security-schema.js';
import { port, positiveSeconds } from './fields.js';
import { artifactsSchema } from './artifacts-schema.js';
import { historySchema, type GatewayHistoryConfig } from './history-schema.js';
import { DEFAULT_OBJECT_PARTITIONS, MAX_OBJECT_PARTITIONS, MIN_OBJECT_PARTITIONS } from '../../db/object-partitions.js';

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
    objectPartitions: z.coerce
      .number()
      .int()
      .min(MIN_OBJECT_PARTITIONS)
      .max(MAX_OBJECT_PARTITIONS)
      .default(DEFAULT_OBJECT_PARTITIONS)
      .describe(
        'Hash partitions (by account) of the object cache table. Used once: when the database is created, or by the ' +
          'upgrade that partitions an existing cache; changing it later changes nothing (the gateway warns at start-up ' +
          'when it differs from the table). Why 16 and when to choose more: docs/scaling.md.',
      ),
    resumeMaxAgeSeconds: z.coerce
      .number()
      .int()
      .min(0)
      .max(30 * 86_400)
      .default(300)
      .describe('Resume points older than this are not offered: the agent re-lists instead.'),
    coalesce: z
      .object({
        enabled: z
          .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
          .default(true)
          .describe(
            "Write the event batches of all this replica's agent streams that wait at the same time in one statement " +
              '(one commit), each account still fenced by its own lease and each batch acknowledged after its commit ' +
              '(docs/scaling.md). false: one statement per batch.',
          ),
        windowMs: z.coerce
          .number()
          .min(0)
          .max(1000)
          .default(10)
          .describe(
            'While several streams write, a group starts no sooner than this after the previous one: at most ' +
              '1000 / windowMs commits a second per replica. A batch that finds nothing being written is written at once.',
          ),
        maxRows: z.coerce
          .number()
          .int()
          .min(1)
          .max(1_000_000)
          .default(5000)
          .describe('Rows (objects and watch positions) one group takes at most; a larger batch is written alone.'),
      })
      .strict()
      .default(() => ({ enabled: true, windowMs: 10, maxRows: 5000 }))
      .describe('Cross-stream group commit of cache writes (src/gateway/cache/write-coalescer.ts).'),
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

const replicasSchema = z
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

const auditSchema = z
  .object({
    retentionDays: z.coerce
      .number()
      .int()
      .min(1)
      .max(3650)
      .default(30)
      .describe('Audit entries older than this many days are deleted by the periodic purge.'),
    purgeIntervalSeconds: z.coerce
      .number()
      .min(1)
      .max(86_400)
      .default(3600)
      .describe('How often each replica purges audit entries past their retention (concurrent purges are harmless).'),
    purgeBatchSize: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(5000)
      .describe('Rows one purge statement deletes at most; a purge repeats batches until none is left.'),
    maxPending: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(10_000)
      .describe(
        'Audit entries held in memory while the database is slow or down; beyond it new entries are dropped (counted ' +
          'in outpost_gateway_audit_entries_dropped_total and logged; the JSON log line of every entry is still written).',
      ),
    reads: z
      .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
      .default(false)
      .describe(
        'Record reads of clusters that run as operations (get, list, logs and history through OperationService and the ' +
          'CLI, the manifest, job and console reads of the Clouddriver API) in the audit log too. Off by default: ' +
          'such reads store nothing (Orca polls them). A SubmitOperation refused before it ran, and every request ' +
          'through /k8s, is recorded whatever this says.',
      ),
  })
  .strict();

const spinnakerSchema = z
  .object({
    enabled: z
      .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
      .default(true)
      .describe(
        'Serve the Clouddriver API (docs/spinnaker.md). With false no Clouddriver route is served (its paths answer 404 ' +
          "in Spring's shape once admitted) and no Spinnaker task is recovered at start-up.",
      ),
    fiat: fiatSchema
      .default(() => fiatSchema.parse({}))
      .describe('Spinnaker\'s Fiat: per-user permissions on the Clouddriver routes (docs/spinnaker.md, "Fiat").'),
    artifacts: artifactsSchema
      .default(() => artifactsSchema.parse({}))
      .describe('Artifact accounts for `PUT /artifacts/fetch` (docs/spinnaker.md).'),
    answerCacheMegabytes: z.coerce
      .number()
      .int()
      .min(0)
      .max(16_384)
      .default(64)
      .describe(
        "Memory for the answers of Deck's application routes (serverGroups, loadBalancers, serverGroupManagers, clusters), " +
          "kept while their accounts' cached objects do not change and served again without reading Postgres " +
          '(docs/spinnaker.md, "Infrastructure views"); 0 keeps none.',
      ),
  })
  .strict();

export const baseSchema = z
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
    replicas: replicasSchema
      .default(() => replicasSchema.parse({}))
      .describe('How gateway replicas discover each other (for /armory/clouddrivers).'),
    web: webSchema.default(() => webSchema.parse({})).describe('The browser dashboard and the fleet summary it watches.'),
    history: historySchema
      .default(() => historySchema.parse({}))
      .describe("The samples behind the dashboard's charts (MetricsService): steps, and whether this replica records them."),
    limits: limitsSchema
      .default(() => limitsSchema.parse({}))
      .describe('What a peer may hold before it is authenticated: connections, HTTP/2 streams, idle time (see docs/security.md).'),
    kube: kubeSchema
      .default(() => kubeSchema.parse({}))
      .describe('kubectl through the gateway (`/k8s/{account}`): identity mapping and limits (docs/kubectl.md).'),
    secrets: secretsSchema
      .default(() => secretsSchema.parse({}))
      .describe("Encryption at rest of Secret values in operation requests and of the dashboard's sessions (see docs/security.md)."),
    audit: auditSchema
      .default(() => auditSchema.parse({}))
      .describe('The audit log of proxied Kubernetes requests and submitted operations (see docs/security.md).'),
    spinnaker: spinnakerSchema
      .default(() => spinnakerSchema.parse({}))
      .describe("The Clouddriver API Spinnaker's Orca and Gate call (docs/spinnaker.md)."),
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
export type GatewayReplicasConfig = z.output<typeof replicasSchema>;
/** Dashboard settings of the gateway. */
type GatewayWebConfig = z.output<typeof webSchema>;
/** Audit log settings of the gateway. */
type GatewayAuditConfig = z.output<typeof auditSchema>;
/** Spinnaker settings of the gateway. */
type GatewaySpinnakerConfig = z.output<typeof spinnakerSchema>;
/** The resolved gateway configuration. */
export interface GatewayConfig {
  id: string;
  host: string;
  httpPort: number;
  grpcPort: number;
  database: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  agents: { heartbeatIntervalSeconds: number; deadAfterSeconds: number; maxUnacked: number; maxStreamAgeSeconds: number };
  cache: { objectPartitions: number; resumeMaxAgeSeconds: number; coalesce: { enabled: boolean; windowMs: number; maxRows: number } };
  operations: { defaultTimeoutSeconds: number; agentWaitSeconds: number; sweepIntervalMs: number; maxManifestBytes: number };
  baseUrl?: string;
  insecure: boolean;
  tls?: GatewayTlsConfig;
  auth: GatewayAuthConfig;
  authorization: { rules: AuthorizationRule[] };
  accounts: { activationTimeoutSeconds: number; cleanupGraceSeconds: number; maxBodyBytes: number; maxPageSize: number };
  replicas: GatewayReplicasConfig;
  web: GatewayWebConfig;
  history: GatewayHistoryConfig;
  secrets: { keyFile?: string };
  kube: GatewayKubeConfig;
  limits: {
    maxConcurrentStreams: number;
    idleConnectionSeconds: number;
    maxUnauthenticatedConnections: number;
    maxRefusedRequestsPerConnection: number;
  };
  audit: GatewayAuditConfig;
  spinnaker: GatewaySpinnakerConfig;
}

/** What a config file, the environment or overrides may hold: any subset of {@link GatewayConfig}. */
export type GatewayConfigInput = Partial<
  Omit<
    GatewayConfig,
    | 'agents'
    | 'cache'
    | 'operations'
    | 'tls'
    | 'auth'
    | 'authorization'
    | 'accounts'
    | 'replicas'
    | 'web'
    | 'history'
    | 'secrets'
    | 'limits'
    | 'kube'
    | 'audit'
    | 'spinnaker'
  >
> & {
  secrets?: Partial<GatewayConfig['secrets']>;
  kube?: Partial<GatewayKubeConfig>;
  limits?: Partial<GatewayConfig['limits']>;
  agents?: Partial<GatewayConfig['agents']>;
  cache?: Partial<GatewayConfig['cache']>;
  operations?: Partial<GatewayConfig['operations']>;
  tls?: z.input<typeof tlsSchema>;
  auth?: z.input<typeof authSchema>;
  authorization?: z.input<typeof authorizationSchema>;
  accounts?: Partial<GatewayConfig['accounts']>;
  replicas?: Partial<GatewayReplicasConfig>;
  web?: Partial<GatewayWebConfig>;
  history?: Partial<GatewayHistoryConfig>;
  audit?: Partial<GatewayAuditConfig>;
  spinnaker?: z.input<typeof spinnakerSchema>;
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
    if (c.auth.oidc !== undefined && !c.insecure && c.secrets.keyFile === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['secrets', 'keyFile'],
        message:
          'is required with auth.oidc on a secure gateway: the dashboard keeps each session\'s provider tokens in the database, encrypted with it (docs/sign-in.md, "The dashboard")',
      });
    }
    if (c.replicas.deadAfterSeconds <= c.replicas.heartbeatIntervalSeconds) {
      ctx.addIssue({
        code: 'custom',
        path: ['replicas', 'deadAfterSeconds'],
        message: `must be greater than replicas.heartbeatIntervalSeconds (${c.replicas.heartbeatIntervalSeconds})`,
      });
    }
  })
  .transform((c) => ({
    ...c,
    id: c.id ?? (c.httpPort === 0 ? `gateway-${randomBytes(4).toString('hex')}` : `${hostname()}-${c.httpPort}`),
  }));
