/**
 * The agent configuration schema (zod v4). It accepts the reference agent's YAML keys, so an existing
 * `armory-agent.yml` loads unchanged: keys the reference documents but Outpost does not use yet are accepted and
 * ignored; any other unknown key is rejected with its path.
 */
import { z } from 'zod';
import { AGENT_DEFAULTS } from './defaults.js';

/** Reference keys accepted for compatibility and ignored (values of any shape). */
const ignored = z.unknown().optional();

const hostPort = z
  .string()
  .trim()
  .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, {
    message: 'expected "host:port", e.g. "gateway.example.com:9091"',
    abort: true,
  })
  .refine((value) => {
    const port = Number(value.slice(value.lastIndexOf(':') + 1));
    return port > 0 && port < 65536;
  }, 'port must be between 1 and 65535');

const positiveSeconds = z.number().positive();

/** A local address to listen on: an IPv4/IPv6 literal or a host name (no port). */
const bindHost = z
  .string()
  .trim()
  .min(1)
  .regex(/^(\[[0-9a-fA-F:.]+\]|[0-9A-Za-z:.-]+)$/, 'expected an address to listen on, e.g. "127.0.0.1", "0.0.0.0" or "::1"')
  .transform((host) => host.replace(/^\[(.*)\]$/, '$1'));

const tlsSchema = z
  .strictObject({
    cacertFile: z.string().min(1).optional(),
    clientCertFile: z.string().min(1).optional(),
    clientKeyFile: z.string().min(1).optional(),
    clientKeyPassword: z.string().optional(),
    serverName: z.string().min(1).optional(),
    insecureSkipVerify: z.boolean().default(false),
  })
  .refine((tls) => !(tls.clientKeyFile && !tls.clientCertFile), {
    message: 'clientKeyFile needs clientCertFile',
    path: ['clientKeyFile'],
  });

/**
 * `clouddriver.auth.tokenCommand`: a shell command line, or the reference's `{command, args}` (run without a shell
 * when `args` is given). Normalized to `{command, args?}`.
 */
const tokenCommandSchema = z
  .union([
    z.string().trim().min(1, 'the token command is empty'),
    z.strictObject({ command: z.string().trim().min(1, 'the token command is empty'), args: z.array(z.string()).optional() }),
  ])
  .transform((value) => (typeof value === 'string' ? { command: value } : value));

/** Bearer token of the stream: a static token, a file read on each connection attempt, or a command re-run. */
const authSchema = z
  .strictObject({
    token: z.string().optional(),
    tokenFile: z.string().min(1).optional(),
    tokenCommand: tokenCommandSchema.optional(),
    tokenCommandIntervalSeconds: z.number().positive().default(AGENT_DEFAULTS.tokenCommandIntervalSeconds),
    tokenCommandTimeoutSeconds: z.number().positive().max(600).default(AGENT_DEFAULTS.tokenCommandTimeoutSeconds),
  })
  .superRefine((auth, ctx) => {
    const sources = (['token', 'tokenFile', 'tokenCommand'] as const).filter((k) => auth[k] !== undefined && auth[k] !== '');
    if (sources.length > 1) {
      ctx.addIssue({ code: 'custom', message: `${sources.join(' and ')} are mutually exclusive: set one token source`, path: [sources[1]!] });
    }
  });

const reconnectSchema = z.strictObject({
  baseSeconds: positiveSeconds.default(AGENT_DEFAULTS.reconnect.baseSeconds),
  factor: z.number().min(1).default(AGENT_DEFAULTS.reconnect.factor),
  maxSeconds: positiveSeconds.default(AGENT_DEFAULTS.reconnect.maxSeconds),
});

/** The reference's `clouddriver.backoff` (durations in nanoseconds); mapped onto `reconnect` when that is absent. */
const referenceBackoffSchema = z.strictObject({
  baseDelay: z.number().positive().optional(),
  multiplier: z.number().min(1).optional(),
  jitter: z.number().min(0).max(1).optional(),
  maxDelay: z.number().positive().optional(),
});

const clouddriverSchema = z
  .strictObject({
    grpc: hostPort.default(AGENT_DEFAULTS.grpc),
    insecure: z.boolean().default(AGENT_DEFAULTS.insecure),
    tls: tlsSchema.optional(),
    auth: authSchema.optional(),
    keepAliveHeartbeatSeconds: z.number().int().min(0).default(AGENT_DEFAULTS.keepAliveHeartbeatSeconds),
    reconnect: reconnectSchema.optional(),
    backoff: referenceBackoffSchema.optional(),
    keepAliveTimeOutSeconds: ignored,
    keepAliveOperationSeconds: ignored,
    responseTimeoutSeconds: ignored,
    noProxy: ignored,
    retries: ignored,
  })
  .transform(({ backoff, reconnect, ...rest }) => ({
    ...rest,
    reconnect: reconnect ?? {
      baseSeconds: backoff?.baseDelay !== undefined ? backoff.baseDelay / 1e9 : AGENT_DEFAULTS.reconnect.baseSeconds,
      factor: backoff?.multiplier ?? AGENT_DEFAULTS.reconnect.factor,
      maxSeconds: backoff?.maxDelay !== undefined ? backoff.maxDelay / 1e9 : AGENT_DEFAULTS.reconnect.maxSeconds,
    },
  }));

/** `Kind` (any group) or `Kind.group` (one group); groups are DNS names. */
const kindName = z
  .string()
  .trim()
  .regex(/^[A-Za-z][A-Za-z0-9]*(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'expected a kind name such as "Deployment" or "Deployment.apps"');

const crdSchema = z.strictObject({
  kind: kindName,
  scope: z.enum(['Namespaced', 'Cluster']).optional(),
  versioned: ignored,
});

/**
 * One `kubernetes.accounts[]` entry. Also validates accounts pushed by the gateway (AccountCommand), so both sources
 * obey the same rules.
 */
export const accountSchema = z
  .strictObject({
    name: z
      .string()
      .regex(
        /^[a-z0-9]([a-z0-9._-]{0,251}[a-z0-9])?$/,
        'account names are lowercase letters, digits, ".", "_" and "-", starting and ending with a letter or digit',
      ),
    kubeconfigFile: z.string().min(1).optional(),
    context: z.string().min(1).optional(),
    serviceAccount: z.boolean().default(false),
    namespaces: z.array(z.string().regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'invalid namespace name')).default([]),
    onlyNamespacedResources: z.boolean().default(false),
    kinds: z.array(kindName).default([]),
    omitKinds: z.array(kindName).default([]),
    customResourceDefinitions: z.array(crdSchema).default([]),
    properties: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)).default({}),
    permissions: z.record(z.string(), z.array(z.string())).optional(),
    // Clouddriver/reference account keys, accepted so account blocks can be copied unchanged; unused.
    metrics: ignored,
    omitNamespaces: ignored,
    onlySpinnakerManaged: ignored,
    maxResumableResourceAgeMs: ignored,
    noProxy: ignored,
    providerVersion: ignored,
    requiredGroupMembership: ignored,
    dockerRegistries: ignored,
    configureImagePullSecrets: ignored,
    cacheThreads: ignored,
    cacheIntervalSeconds: ignored,
    customResources: ignored,
    cachingPolicies: ignored,
    oAuthScopes: ignored,
    oAuthServiceAccount: ignored,
    primaryAccount: ignored,
    environment: ignored,
    accountType: ignored,
    namingStrategy: ignored,
    skin: ignored,
    liveManifestCalls: ignored,
    checkPermissionsOnStartup: ignored,
    kubectlExecutable: ignored,
    kubectlRequestTimeoutSeconds: ignored,
    rawResourcesEndpointConfig: ignored,
    cacheAllApplicationRelationships: ignored,
    debug: ignored,
  })
  .refine((a) => a.serviceAccount || a.kubeconfigFile !== undefined, {
    message: 'set kubeconfigFile (optionally with context) or serviceAccount: true',
    path: ['kubeconfigFile'],
  })
  .refine((a) => !(a.serviceAccount && a.kubeconfigFile !== undefined), {
    message: 'kubeconfigFile and serviceAccount: true are mutually exclusive',
    path: ['serviceAccount'],
  });

const kubernetesSchema = z.strictObject({
  /** Kinds applied with server-side apply by default (`Kind` or `Kind.group`). */
  serverSideApply: z.array(kindName).default([]),
  /** Retries of Kubernetes calls made by operations. */
  retries: z
    .strictObject({
      maxAttempts: z.number().int().min(1).max(20).default(AGENT_DEFAULTS.retries.maxAttempts),
      backoffMs: z.number().int().min(0).max(60_000).default(AGENT_DEFAULTS.retries.backoffMs),
    })
    .prefault({}),
  accounts: z
    .array(accountSchema)
    .default([])
    .superRefine((accounts, ctx) => {
      const seen = new Set<string>();
      accounts.forEach((account, index) => {
        if (seen.has(account.name)) {
          ctx.addIssue({ code: 'custom', message: `duplicate account name "${account.name}"`, path: [index, 'name'] });
        }
        seen.add(account.name);
      });
    }),
});

const logLevel = z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

/** The whole agent configuration file. Parse with {@link loadAgentConfig} to get env overrides and file errors. */
export const agentConfigSchema = z.strictObject({
  clouddriver: clouddriverSchema.prefault({}),
  agent: z
    .strictObject({
      id: z.string().min(1).optional(),
      zone: z.string().min(1).optional(),
      replicas: z.number().int().min(1).default(AGENT_DEFAULTS.replicas),
    })
    .prefault({}),
  kubernetes: kubernetesSchema.prefault({}),
  server: z
    .strictObject({
      port: z.number().int().min(0).max(65535).default(AGENT_DEFAULTS.adminPort),
      /** Bind address of the admin server; the default keeps it local (rule: the agent accepts no outside connection). */
      host: bindHost.default(AGENT_DEFAULTS.adminHost),
      tls: ignored,
    })
    .prefault({}),
  /**
   * Prometheus metrics server. `port` unset means {@link AGENT_DEFAULTS.metricsPort}, or an ephemeral port when
   * `server.port` is 0 (several agents on one host, tests); `host` unset means `server.host`. Resolve both with
   * `metricsAddress` (src/agent/metrics/metrics-server.ts).
   */
  prometheus: z
    .strictObject({
      enabled: z.boolean().default(AGENT_DEFAULTS.metricsEnabled),
      port: z.number().int().min(0).max(65535).optional(),
      host: bindHost.optional(),
    })
    .prefault({}),
  logging: z
    .strictObject({
      level: logLevel.default(AGENT_DEFAULTS.logLevel),
      format: ignored,
      file: ignored,
      maxsize: ignored,
      maxbackups: ignored,
      maxage: ignored,
      localtime: ignored,
      compress: ignored,
    })
    .prefault({}),
  operations: z
    .strictObject({
      concurrency: z.number().int().min(1).max(1024).default(AGENT_DEFAULTS.operationConcurrency),
      resultCacheSize: z.number().int().min(1).default(AGENT_DEFAULTS.operationResultCacheSize),
      resultTtlSeconds: z.number().positive().default(AGENT_DEFAULTS.operationResultTtlSeconds),
      outboxSize: z.number().int().min(1).default(AGENT_DEFAULTS.operationOutboxSize),
    })
    .prefault({}),
  // Reference sections accepted and ignored for now.
  metrics: ignored,
  tasks: ignored,
  secrets: ignored,
  dynamicAccounts: ignored,
});

/** A validated agent configuration (defaults applied). Build one with `agentConfigSchema.parse(...)`. */
export type AgentConfig = z.output<typeof agentConfigSchema>;
/** The input shape of the configuration (what a YAML file or a test object may contain). */
export type AgentConfigInput = z.input<typeof agentConfigSchema>;
/** One `kubernetes.accounts[]` entry after validation. */
export type AccountConfig = AgentConfig['kubernetes']['accounts'][number];
