/**
 * Every default of the agent configuration, in one place. The schema, the example file and the docs refer to these
 * values; change a default here and nowhere else.
 */
export const AGENT_DEFAULTS = {
  /** Gateway gRPC address (host:port). */
  grpc: 'localhost:9091',
  /** Plaintext HTTP/2 (h2c) towards the gateway. */
  insecure: true,
  /** `clouddriver.transport`: gRPC first, WebSocket when HTTP/2 cannot pass. */
  transport: 'auto' as const,
  /** `clouddriver.connections`: one stream to the gateway (2 keeps a standby stream on another replica). */
  connections: 1,
  /** `clouddriver.transportRetrySeconds`: how long a WebSocket fallback is kept before gRPC is tried again. */
  transportRetrySeconds: 600,
  /** Heartbeat interval until the gateway's Welcome says otherwise (the reference agent's default). */
  keepAliveHeartbeatSeconds: 20,
  /** A peer silent for this many heartbeat intervals is considered dead. */
  deadPeerIntervals: 3,
  /** How often `clouddriver.auth.tokenCommand` is re-run (and the longest a token from it is used for new connections). */
  tokenCommandIntervalSeconds: 300,
  /** A token command running longer than this is killed (its previous token is kept). */
  tokenCommandTimeoutSeconds: 30,
  /** How often the configuration file is checked for changes (accounts are reloaded without a restart). */
  configPollMs: 1000,
  /** Reconnect backoff: exponential with full jitter; a welcomed stream that lasted stableSeconds starts it over. */
  reconnect: { baseSeconds: 1, factor: 1.6, maxSeconds: 120, stableSeconds: 10 },
  /** Agent zone when neither the config nor POD_NAMESPACE gives one. */
  zone: 'default',
  replicas: 1,
  /** Local admin port (health, status, accounts, operations, watches); 0 picks an ephemeral port. */
  adminPort: 8082,
  /** Address the admin server (and, unless `prometheus.host` says otherwise, the metrics server) binds to. */
  adminHost: '127.0.0.1',
  /** Prometheus metrics port (`GET /metrics`); an ephemeral one when `server.port` is 0 and none is configured. */
  metricsPort: 8008,
  /** Serve Prometheus metrics at all. */
  metricsEnabled: true,
  logLevel: 'info',
  /** Page size of full lists. */
  listPageSize: 500,
  /** Parallel SelfSubjectAccessReview requests per account. */
  accessReviewConcurrency: 8,
  /** Event batching: flush at this many events, or after this many milliseconds. */
  batchMaxEvents: 500,
  batchFlushMs: 20,
  /** …or when the batched objects reach this many bytes (the gateway limits message size, 4 MiB by default). */
  batchMaxBytes: 1024 * 1024,
  /** How often progress of a running full list is reported to the gateway and logged. */
  progressIntervalMs: 1000,
  /** Window of unacknowledged data messages when the Welcome gives none. */
  maxUnacked: 16,
  /** Watch restart backoff (seconds). */
  watchBackoff: { baseSeconds: 0.5, factor: 2, maxSeconds: 30 },
  /** Retries of Kubernetes calls in operations (timeouts, 5xx, 429; 409 on apply): attempts in all, first delay. */
  retries: { maxAttempts: 3, backoffMs: 500 },
  /** Operations run at the same time (the rest wait their turn, their timeout running). */
  operationConcurrency: 32,
  /** Results kept by operation id, so a redelivered operation returns its result instead of running again. */
  operationResultCacheSize: 10_000,
  operationResultTtlSeconds: 15 * 60,
  /** Results waiting for a stream (while disconnected); the oldest are dropped beyond this (still kept by id). */
  operationOutboxSize: 1_000,
  /**
   * `kubeProxy.secrets`: what `/k8s` may answer about Secrets. `deny` keeps their values in the cluster (reads that
   * would carry them are refused, answers to writes are scrubbed); `allow` passes them under the cluster's RBAC.
   */
  kubeProxySecrets: 'deny' as 'deny' | 'allow',
  /** Default field manager of server-side apply. */
  fieldManager: 'outpost',
} as const;
