/**
 * (Over 400 lines on purpose: one schema, every key with its description, which the generated reference prints.)
 *
 * The agent configuration schema (zod v4). It accepts the reference agent's YAML keys, so an existing
 * `armory-agent.yml` loads unchanged: keys the reference documents but Outpost does not use yet are accepted and
 * ignored; any other unknown key is rejected with its path.
 */
import { z } from 'zod';
import { parseProxyUrl } from '../stream/proxy-settings.js';
import { AGENT_DEFAULTS } from './defaults.js';

/** Reference keys accepted for compatibility and ignored (values of any shape). */
const ignored = z.unknown().optional().describe('Accepted for compatibility with the reference agent; ignored.');

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

/** `clouddriver.proxy`: checked by the same parser the connection uses, so its message is the one users see. */
const proxyUrl = z
  .string()
  .trim()
  .min(1)
  .superRefine((value, ctx) => {
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
      ctx.addIssue({ code: 'custom', message: 'expected a URL with a scheme: http://[user:password@]host:port' });
      return;
    }
    try {
      parseProxyUrl(value, 'clouddriver.proxy');
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message.replace(/^clouddriver\.proxy: /, '') });
    }
  });

/** A local address to listen on: an IPv4/IPv6 literal or a host name (no port). */
const bindHost = z
  .string()
  .trim()
  .min(1)
  .regex(/^(\[[0-9a-fA-F:.]+\]|[0-9A-Za-z:.-]+)$/, 'expected an address to listen on, e.g. "127.0.0.1", "0.0.0.0" or "::1"')
  .transform((host) => host.replace(/^\[(.*)\]$/, '$1'));

const tlsSchema = z
  .strictObject({
    cacertFile: z
      .string()
      .min(1)
      .optional()
      .describe('CA bundle (PEM) to verify the gateway certificate; default: the system trust store.'),
    clientCertFile: z
      .string()
      .min(1)
      .optional()
      .describe('Client certificate (PEM) for mutual TLS; the key may be bundled in it. Read at every connection attempt.'),
    clientKeyFile: z.string().min(1).optional().describe('Private key (PEM) of clientCertFile.'),
    clientKeyPassword: z.string().optional().describe('Password of an encrypted clientKeyFile.'),
    serverName: z.string().min(1).optional().describe('Name expected on the gateway certificate when it differs from the host of `grpc`.'),
    insecureSkipVerify: z.boolean().default(false).describe('Do not verify the gateway certificate (tests only).'),
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
    z.strictObject({
      command: z.string().trim().min(1, 'the token command is empty').describe('The program to run (no shell).'),
      args: z.array(z.string()).optional().describe('Its arguments.'),
    }),
  ])
  .transform((value) => (typeof value === 'string' ? { command: value } : value));

/** Bearer token of the stream: a static token, a file read on each connection attempt, or a command re-run. */
const authSchema = z
  .strictObject({
    token: z
      .string()
      .optional()
      .describe('Bearer token sent as `authorization: Bearer <token>` (never logged). One of token, tokenFile, tokenCommand.'),
    tokenFile: z
      .string()
      .min(1)
      .optional()
      .describe('File holding the token, read before every connection attempt (relative to the config file).'),
    tokenCommand: tokenCommandSchema
      .optional()
      .describe(
        'Command whose trimmed stdout is the token: a shell command line, or `{command, args}` run without a shell. ' +
          'A failing run is logged and the previous token kept.',
      ),
    tokenCommandIntervalSeconds: z
      .number()
      .positive()
      .default(AGENT_DEFAULTS.tokenCommandIntervalSeconds)
      .describe('How often tokenCommand is re-run (and the longest its token is used for new connections).'),
    tokenCommandTimeoutSeconds: z
      .number()
      .positive()
      .max(600)
      .default(AGENT_DEFAULTS.tokenCommandTimeoutSeconds)
      .describe('A tokenCommand running longer than this is killed; the previous token is kept.'),
  })
  .superRefine((auth, ctx) => {
    const sources = (['token', 'tokenFile', 'tokenCommand'] as const).filter((k) => auth[k] !== undefined && auth[k] !== '');
    if (sources.length > 1) {
      ctx.addIssue({
        code: 'custom',
        message: `${sources.join(' and ')} are mutually exclusive: set one token source`,
        path: [sources[1]!],
      });
    }
  });

const reconnectSchema = z.strictObject({
  baseSeconds: positiveSeconds
    .default(AGENT_DEFAULTS.reconnect.baseSeconds)
    .describe('First reconnect delay ceiling (full jitter: the delay is uniform below it).'),
  factor: z.number().min(1).default(AGENT_DEFAULTS.reconnect.factor).describe('Growth of the ceiling after each failed attempt.'),
  maxSeconds: positiveSeconds.default(AGENT_DEFAULTS.reconnect.maxSeconds).describe('Largest reconnect delay ceiling.'),
  stableSeconds: positiveSeconds
    .default(AGENT_DEFAULTS.reconnect.stableSeconds)
    .describe('A welcomed stream that lasted this long resets the backoff to its first step.'),
});

/** The reference's `clouddriver.backoff` (durations in nanoseconds); mapped onto `reconnect` when that is absent. */
const referenceBackoffSchema = z.strictObject({
  baseDelay: z.number().positive().optional().describe('Reference key: first delay in nanoseconds (→ reconnect.baseSeconds).'),
  multiplier: z.number().min(1).optional().describe('Reference key: growth factor (→ reconnect.factor).'),
  jitter: z.number().min(0).max(1).optional().describe('Reference key: accepted and ignored (Outpost always uses full jitter).'),
  maxDelay: z.number().positive().optional().describe('Reference key: largest delay in nanoseconds (→ reconnect.maxSeconds).'),
});

const clouddriverSchema = z
  .strictObject({
    grpc: hostPort
      .default(AGENT_DEFAULTS.grpc)
      .describe(
        'Gateway address for gRPC, `host:port` (HTTP/2 end to end). Behind an HTTP/1.1-only proxy the agent falls back ' +
          'to WebSocket (`transport: auto`), by default at this same address.',
      ),
    insecure: z.boolean().default(AGENT_DEFAULTS.insecure).describe('true: plaintext HTTP/2 (h2c); false: TLS, configured by `tls`.'),
    transport: z
      .enum(['auto', 'grpc', 'websocket'])
      .default(AGENT_DEFAULTS.transport)
      .describe(
        'How the stream reaches the gateway: `grpc` (HTTP/2), `websocket` (HTTP/1.1 upgrade on the gateway HTTP port, ' +
          'for proxies and load balancers that pass no HTTP/2), or `auto`: gRPC first, WebSocket when HTTP/2 cannot pass ' +
          '(docs/networks.md).',
      ),
    websocket: z
      .string()
      .trim()
      .refine((v) => /^wss?:\/\/[^/\s]+/i.test(v) || /^[^\s/:]+:\d{1,5}$|^\[[0-9a-fA-F:.]+\]:\d{1,5}$/.test(v), {
        message: 'expected host:port or a ws:// or wss:// URL',
      })
      .optional()
      .describe(
        'Where the WebSocket transport connects: the gateway HTTP port as `host:port`, or a `ws://`/`wss://` URL (its ' +
          'path defaults to the agent stream path). Default: the `grpc` address, `wss` unless `insecure`.',
      ),
    connections: z
      .number()
      .int()
      .min(1)
      .max(2)
      .default(AGENT_DEFAULTS.connections)
      .describe(
        'Streams kept to the gateway: 1, or 2 — to two different replicas (reached through the same address), one ' +
          'caching the accounts and one standing by, so losing a replica costs no reconnect and no forwarding hop.',
      ),
    transportRetrySeconds: z
      .number()
      .positive()
      .max(86400)
      .default(AGENT_DEFAULTS.transportRetrySeconds)
      .describe('With `transport: auto`: how long WebSocket is kept after HTTP/2 could not pass before gRPC is tried again.'),
    tls: tlsSchema.optional().describe('TLS towards the gateway (with `insecure: false`).'),
    auth: authSchema.optional().describe('The bearer token of the stream.'),
    keepAliveHeartbeatSeconds: z
      .number()
      .int()
      .min(0)
      .default(AGENT_DEFAULTS.keepAliveHeartbeatSeconds)
      .describe(
        "Heartbeat interval until the gateway's Welcome sets one; 0 sends none. The gateway is considered dead after " +
          '3 silent intervals.',
      ),
    reconnect: reconnectSchema.optional().describe('Reconnect backoff: exponential with full jitter.'),
    backoff: referenceBackoffSchema.optional().describe("The reference's backoff (nanoseconds); used when `reconnect` is absent."),
    proxy: proxyUrl
      .optional()
      .describe(
        'HTTP forward proxy to reach the gateway through (HTTP CONNECT tunnel), `http://[user:password@]host:port` with ' +
          'the user info percent-encoded; overrides HTTPS_PROXY / HTTP_PROXY (https_proxy / http_proxy first). ' +
          'https:// proxies (TLS to the proxy) are not supported; TLS to the gateway runs inside the tunnel.',
      ),
    noProxy: z
      .union([z.boolean(), z.string()])
      .optional()
      .describe(
        'true: never use a proxy (ignore `proxy` and the environment). A string: hosts to reach directly, replacing ' +
          'NO_PROXY / no_proxy: comma-separated names (`example.com` or `.example.com` also cover names under it), ' +
          '`*`, IP addresses, CIDR ranges, each optionally with `:port`. false or unset: NO_PROXY applies.',
      ),
    keepAliveTimeOutSeconds: ignored,
    keepAliveOperationSeconds: ignored,
    responseTimeoutSeconds: ignored,
    retries: ignored,
  })
  .refine((c) => !(c.noProxy === true && c.proxy !== undefined), {
    message: 'noProxy: true disables the proxy that `proxy` sets; remove one of them',
    path: ['noProxy'],
  })
  .transform(({ backoff, reconnect, ...rest }) => ({
    ...rest,
    reconnect: reconnect ?? {
      baseSeconds: backoff?.baseDelay !== undefined ? backoff.baseDelay / 1e9 : AGENT_DEFAULTS.reconnect.baseSeconds,
      factor: backoff?.multiplier ?? AGENT_DEFAULTS.reconnect.factor,
      maxSeconds: backoff?.maxDelay !== undefined ? backoff.maxDelay / 1e9 : AGENT_DEFAULTS.reconnect.maxSeconds,
      stableSeconds: AGENT_DEFAULTS.reconnect.stableSeconds,
    },
  }));

/** `Kind` (any group) or `Kind.group` (one group); groups are DNS names. */
const kindName = z
  .string()
  .trim()
  .regex(/^[A-Za-z][A-Za-z0-9]*(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'expected a kind name such as "Deployment" or "Deployment.apps"');

const crdSchema = z.strictObject({
  kind: kindName.describe('`Kind.group` of the custom resource.'),
  scope: z.enum(['Namespaced', 'Cluster']).optional().describe('Checked against discovery when given.'),
  versioned: ignored,
});

const kubeProxySchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('Serve Kubernetes API requests from the gateway (`/k8s/{account}`) for this account.'),
    identity: z
      .enum(['caller', 'static'])
      .default('caller')
      .describe(
        '`caller`: impersonate the caller as the gateway maps it (docs/kubectl.md, "Identity mapping"); `static`: ' +
          'impersonate `user` and `groups` for every caller.',
      ),
    user: z.string().min(1).optional().describe('With identity static: the user to impersonate.'),
    groups: z.array(z.string().min(1)).default([]).describe('With identity static: the groups to impersonate.'),
    secrets: z
      .enum(['deny', 'allow'])
      .default(AGENT_DEFAULTS.kubeProxySecrets)
      .describe(
        '`deny`: Secret values never leave the cluster through `/k8s` — reads that would return them (get, list, ' +
          'watch of Secrets as objects) are refused 403, metadata-only reads (`kubectl get secrets` as a table) work, ' +
          'writes pass but their answers carry no values, and JSON patches reading `/data` or `/stringData` are ' +
          'refused; `allow`: Secrets pass through and the cluster\'s RBAC decides (docs/kubectl.md, "Secrets").',
      ),
  })
  .refine((p) => p.identity !== 'static' || p.user !== undefined, {
    message: 'identity static needs user (the Kubernetes user every request is made as)',
    path: ['user'],
  })
  .refine((p) => p.identity === 'static' || (p.user === undefined && p.groups.length === 0), {
    message: 'user and groups apply to identity static only',
    path: ['identity'],
  })
  .default({ enabled: true, identity: 'caller', groups: [], secrets: AGENT_DEFAULTS.kubeProxySecrets });

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
      )
      .describe('Unique across every cluster connected to the gateway; bound to this cluster at first registration.'),
    kubeconfigFile: z
      .string()
      .min(1)
      .optional()
      .describe('Kubeconfig of the cluster (relative to the config file); or serviceAccount: true.'),
    context: z.string().min(1).optional().describe('Context of kubeconfigFile; its current context when unset.'),
    serviceAccount: z.boolean().default(false).describe("Use the pod's own service account (in-cluster) instead of a kubeconfig."),
    namespaces: z
      .array(z.string().regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'invalid namespace name'))
      .default([])
      .describe('Namespaces to watch (one watch per namespace for namespaced kinds); empty: all namespaces.'),
    onlyNamespacedResources: z.boolean().default(false).describe('Watch only namespaced kinds (no Nodes, Namespaces, ClusterRoles…).'),
    kinds: z.array(kindName).default([]).describe('Kinds to watch (`Kind` in any group or `Kind.group`); empty: every kind RBAC allows.'),
    omitKinds: z.array(kindName).default([]).describe('Kinds never to watch.'),
    customResourceDefinitions: z.array(crdSchema).default([]).describe('Custom resources to watch.'),
    properties: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String))
      .default({})
      .describe('Free-form properties forwarded to the gateway.'),
    permissions: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .describe('Spinnaker-style READ/WRITE role lists (accepted, not enforced yet).'),
    kubeProxy: kubeProxySchema.describe('kubectl through the gateway for this account (docs/kubectl.md).'),
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
  serverSideApply: z
    .array(kindName)
    .default([])
    .describe('Kinds applied with server-side apply by default (`Kind` or `Kind.group`); client-side apply otherwise.'),
  retries: z
    .strictObject({
      maxAttempts: z
        .number()
        .int()
        .min(1)
        .max(20)
        .default(AGENT_DEFAULTS.retries.maxAttempts)
        .describe('Attempts in all (timeouts, 5xx, 429; 409 on apply).'),
      backoffMs: z
        .number()
        .int()
        .min(0)
        .max(60_000)
        .default(AGENT_DEFAULTS.retries.backoffMs)
        .describe('First retry delay; doubles after each attempt.'),
    })
    .prefault({})
    .describe('Retries of the Kubernetes calls operations make.'),
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
    })
    .describe('The clusters (accounts) this agent serves. Reloaded from the file without a restart.'),
  dynamicKubeconfigDirs: z
    .array(z.string().min(1))
    .optional()
    .describe(
      'Directories under which the kubeconfig files of dynamic accounts (defined at the gateway) must lie, after ' +
        "resolving `..` and symbolic links; relative ones are resolved against the config file's directory. Default: " +
        "the config file's directory only (none when the configuration comes from no file). A dynamic account naming " +
        'any other path fails with the reason, and the file is never read. Read at start.',
    ),
});

const logLevel = z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

/** The whole agent configuration file. Parse with {@link loadAgentConfig} to get env overrides and file errors. */
export const agentConfigSchema = z.strictObject({
  clouddriver: clouddriverSchema.prefault({}).describe('The connection to the gateway (the reference agent calls it clouddriver).'),
  agent: z
    .strictObject({
      id: z.string().min(1).optional().describe('Agent id in the Hello; default: env POD_NAME, else the hostname.'),
      zone: z.string().min(1).optional().describe('Zone; default: env POD_NAMESPACE, else "default".'),
      replicas: z
        .number()
        .int()
        .min(1)
        .default(AGENT_DEFAULTS.replicas)
        .describe('Number of agent replicas deployed for the same accounts.'),
    })
    .prefault({})
    .describe("This agent's identity."),
  kubernetes: kubernetesSchema.prefault({}).describe('The clusters to watch and how operations call them.'),
  server: z
    .strictObject({
      port: z
        .number()
        .int()
        .min(0)
        .max(65535)
        .default(AGENT_DEFAULTS.adminPort)
        .describe('Admin port (read-only JSON: /health, /livez, /status…); 0 picks a free port.'),
      host: bindHost
        .default(AGENT_DEFAULTS.adminHost)
        .describe('Bind address of the admin server; the default keeps it local (rule: the agent accepts no outside connection).'),
      tls: ignored,
    })
    .prefault({})
    .describe('The local admin server.'),
  /**
   * Prometheus metrics server. `port` unset means {@link AGENT_DEFAULTS.metricsPort}, or an ephemeral port when
   * `server.port` is 0 (several agents on one host, tests); `host` unset means `server.host`. Resolve both with
   * `metricsAddress` (src/agent/metrics/metrics-server.ts).
   */
  prometheus: z
    .strictObject({
      enabled: z.boolean().default(AGENT_DEFAULTS.metricsEnabled).describe('Serve Prometheus metrics at GET /metrics.'),
      port: z
        .number()
        .int()
        .min(0)
        .max(65535)
        .optional()
        .describe(`Metrics port; default ${AGENT_DEFAULTS.metricsPort} (a free port when server.port is 0); 0 picks a free port.`),
      host: bindHost.optional().describe('Bind address of the metrics server; default: server.host.'),
    })
    .prefault({})
    .describe('The Prometheus metrics server.'),
  logging: z
    .strictObject({
      level: logLevel.default(AGENT_DEFAULTS.logLevel).describe('Lowest level logged (JSON lines on stdout).'),
      format: ignored,
      file: ignored,
      maxsize: ignored,
      maxbackups: ignored,
      maxage: ignored,
      localtime: ignored,
      compress: ignored,
    })
    .prefault({})
    .describe('Logging.'),
  operations: z
    .strictObject({
      concurrency: z
        .number()
        .int()
        .min(1)
        .max(1024)
        .default(AGENT_DEFAULTS.operationConcurrency)
        .describe('Operations run at the same time; more wait their turn (their timeout keeps running).'),
      resultCacheSize: z
        .number()
        .int()
        .min(1)
        .default(AGENT_DEFAULTS.operationResultCacheSize)
        .describe('Results kept by operation id: a redelivered operation returns its stored result instead of running again.'),
      resultTtlSeconds: z
        .number()
        .positive()
        .default(AGENT_DEFAULTS.operationResultTtlSeconds)
        .describe('How long a result is kept by id.'),
      outboxSize: z
        .number()
        .int()
        .min(1)
        .default(AGENT_DEFAULTS.operationOutboxSize)
        .describe('Results waiting for the gateway stream while disconnected; the oldest are dropped beyond this.'),
    })
    .prefault({})
    .describe('Operations the gateway sends.'),
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
