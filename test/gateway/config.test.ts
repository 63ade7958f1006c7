/**
 * Gateway configuration: defaults, the shipped example file, env and override precedence, and errors naming the key.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { GatewayConfigError, gatewayConfigSchema, loadGatewayConfig } from '../../src/gateway/index.js';
import { gatewayEnvVariables } from '../../src/gateway/config/load.js';

const example = fileURLToPath(new URL('../../config/gateway.example.yaml', import.meta.url));

describe('gateway config', () => {
  test('defaults', () => {
    const c = loadGatewayConfig({});
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.httpPort, 7002);
    assert.equal(c.grpcPort, 9091);
    assert.equal(c.database, '.outpost/db');
    assert.equal(c.logLevel, 'info');
    assert.deepEqual(c.agents, { heartbeatIntervalSeconds: 10, deadAfterSeconds: 30, maxUnacked: 32, maxStreamAgeSeconds: 7200 });
    assert.deepEqual(c.cache, {
      objectPartitions: 16,
      resumeMaxAgeSeconds: 300,
      coalesce: { enabled: true, windowMs: 10, maxRows: 5000 },
    });
    assert.deepEqual(c.operations, {
      defaultTimeoutSeconds: 30,
      agentWaitSeconds: 10,
      sweepIntervalMs: 1000,
      maxManifestBytes: 1024 * 1024,
    });
    assert.match(c.id, /-7002$/);
    assert.equal(c.baseUrl, undefined);
    assert.match(loadGatewayConfig({ overrides: { httpPort: 0 } }).id, /^gateway-[0-9a-f]{8}$/);
  });

  test('the example file loads and equals the defaults', () => {
    const fromFile = loadGatewayConfig({ file: example });
    assert.deepEqual(fromFile, loadGatewayConfig({}));
    assert.deepEqual(gatewayConfigSchema.parse({}), { ...fromFile, id: gatewayConfigSchema.parse({}).id });
  });

  test('cache.coalesce from the env: off, another window; a bad window refused naming the key', () => {
    const c = loadGatewayConfig({
      env: { OUTPOST_GATEWAY_CACHE_COALESCE_ENABLED: 'false', OUTPOST_GATEWAY_CACHE_COALESCE_WINDOW_MS: '2.5' },
    });
    assert.deepEqual(c.cache.coalesce, { enabled: false, windowMs: 2.5, maxRows: 5000 });
    assert.throws(
      () => loadGatewayConfig({ env: { OUTPOST_GATEWAY_CACHE_COALESCE_WINDOW_MS: '-1' } }),
      (err: unknown) => err instanceof GatewayConfigError && /cache\.coalesce\.windowMs/.test(err.message),
    );
  });

  test('cache.objectPartitions: 16 by default, 64 from the env; 0, 1025, 2.5 and words refused naming the key and the range', () => {
    assert.equal(loadGatewayConfig({}).cache.objectPartitions, 16);
    assert.equal(loadGatewayConfig({ env: { OUTPOST_GATEWAY_CACHE_OBJECT_PARTITIONS: '64' } }).cache.objectPartitions, 64);
    assert.equal(loadGatewayConfig({ overrides: { cache: { objectPartitions: 1 } } }).cache.objectPartitions, 1);
    for (const [bad, problem] of [
      ['0', />=1/],
      ['1025', /<=1024/],
      ['2.5', /int/],
      ['many', /number/],
    ] as const) {
      assert.throws(
        () => loadGatewayConfig({ env: { OUTPOST_GATEWAY_CACHE_OBJECT_PARTITIONS: bad } }),
        (err: unknown) => err instanceof GatewayConfigError && /cache\.objectPartitions/.test(err.message) && problem.test(err.message),
        bad,
      );
    }
  });

  test('spinnaker.answerCacheMegabytes: 64 by default, 0 (off) from the env, a negative size refused naming the key', () => {
    assert.equal(loadGatewayConfig({}).spinnaker.answerCacheMegabytes, 64);
    assert.equal(loadGatewayConfig({ env: { OUTPOST_GATEWAY_SPINNAKER_ANSWER_CACHE_MEGABYTES: '0' } }).spinnaker.answerCacheMegabytes, 0);
    assert.throws(
      () => loadGatewayConfig({ env: { OUTPOST_GATEWAY_SPINNAKER_ANSWER_CACHE_MEGABYTES: '-1' } }),
      (err: unknown) => err instanceof GatewayConfigError && /spinnaker\.answerCacheMegabytes/.test(err.message),
    );
  });

  test('file < env < overrides', () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-gw-config-'));
    try {
      const file = join(dir, 'gw.yaml');
      writeFileSync(file, 'httpPort: 1000\ngrpcPort: 1001\ndatabase: /from/file\nagents:\n  maxUnacked: 5\n');
      const c = loadGatewayConfig({
        file,
        env: {
          OUTPOST_GATEWAY_GRPC_PORT: '2001',
          OUTPOST_GATEWAY_DATABASE: 'memory://',
          OUTPOST_GATEWAY_AGENTS_DEAD_AFTER_SECONDS: '45',
          OUTPOST_GATEWAY_ID: '',
        },
        overrides: { database: 'postgres://x@db/outpost', id: 'gw-9', httpPort: undefined },
      });
      assert.equal(c.httpPort, 1000);
      assert.equal(c.grpcPort, 2001);
      assert.equal(c.database, 'postgres://x@db/outpost');
      assert.equal(c.id, 'gw-9');
      assert.deepEqual(c.agents, { heartbeatIntervalSeconds: 10, deadAfterSeconds: 45, maxUnacked: 5, maxStreamAgeSeconds: 7200 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('every key has an environment variable', () => {
    const names = [...gatewayEnvVariables().keys()].sort();
    assert.deepEqual(names, [
      'OUTPOST_GATEWAY_ACCOUNTS_ACTIVATION_TIMEOUT_SECONDS',
      'OUTPOST_GATEWAY_ACCOUNTS_CLEANUP_GRACE_SECONDS',
      'OUTPOST_GATEWAY_ACCOUNTS_MAX_BODY_BYTES',
      'OUTPOST_GATEWAY_ACCOUNTS_MAX_PAGE_SIZE',
      'OUTPOST_GATEWAY_AGENTS_DEAD_AFTER_SECONDS',
      'OUTPOST_GATEWAY_AGENTS_HEARTBEAT_INTERVAL_SECONDS',
      'OUTPOST_GATEWAY_AGENTS_MAX_STREAM_AGE_SECONDS',
      'OUTPOST_GATEWAY_AGENTS_MAX_UNACKED',
      'OUTPOST_GATEWAY_AUDIT_MAX_PENDING',
      'OUTPOST_GATEWAY_AUDIT_PURGE_BATCH_SIZE',
      'OUTPOST_GATEWAY_AUDIT_PURGE_INTERVAL_SECONDS',
      'OUTPOST_GATEWAY_AUDIT_READS',
      'OUTPOST_GATEWAY_AUDIT_RETENTION_DAYS',
      'OUTPOST_GATEWAY_AUTH_JWT_AUDIENCE',
      'OUTPOST_GATEWAY_AUTH_JWT_CLOCK_TOLERANCE_SECONDS',
      'OUTPOST_GATEWAY_AUTH_JWT_GROUPS_CLAIM',
      'OUTPOST_GATEWAY_AUTH_JWT_ISSUER',
      'OUTPOST_GATEWAY_AUTH_JWT_MAX_LIFETIME_SECONDS',
      'OUTPOST_GATEWAY_AUTH_JWT_PUBLIC_KEY_FILE',
      'OUTPOST_GATEWAY_AUTH_JWT_SECRET_FILE',
      'OUTPOST_GATEWAY_AUTH_JWT_SUBJECT_CLAIM',
      'OUTPOST_GATEWAY_AUTH_OIDC_EXTERNAL_URL',
      'OUTPOST_GATEWAY_AUTH_OIDC_IDLE_MINUTES',
      'OUTPOST_GATEWAY_AUTH_OIDC_SESSION_HOURS',
      'OUTPOST_GATEWAY_AUTH_READ_ACCESS',
      'OUTPOST_GATEWAY_AUTH_REPLICA_SECRET_FILE',
      'OUTPOST_GATEWAY_BASE_URL',
      'OUTPOST_GATEWAY_CACHE_COALESCE_ENABLED',
      'OUTPOST_GATEWAY_CACHE_COALESCE_MAX_ROWS',
      'OUTPOST_GATEWAY_CACHE_COALESCE_WINDOW_MS',
      'OUTPOST_GATEWAY_CACHE_OBJECT_PARTITIONS',
      'OUTPOST_GATEWAY_CACHE_RESUME_MAX_AGE_SECONDS',
      'OUTPOST_GATEWAY_DATABASE',
      'OUTPOST_GATEWAY_GRPC_PORT',
      'OUTPOST_GATEWAY_HISTORY_ACCOUNT_STEP_SECONDS',
      'OUTPOST_GATEWAY_HISTORY_DAY_STEP_SECONDS',
      'OUTPOST_GATEWAY_HISTORY_ENABLED',
      'OUTPOST_GATEWAY_HISTORY_STEP_SECONDS',
      'OUTPOST_GATEWAY_HOST',
      'OUTPOST_GATEWAY_HTTP_PORT',
      'OUTPOST_GATEWAY_ID',
      'OUTPOST_GATEWAY_INSECURE',
      'OUTPOST_GATEWAY_KUBE_ENABLED',
      'OUTPOST_GATEWAY_KUBE_GROUPS_PREFIX',
      'OUTPOST_GATEWAY_KUBE_MAX_CONCURRENT_PER_ACCOUNT',
      'OUTPOST_GATEWAY_KUBE_MAX_CONCURRENT_PER_IDENTITY',
      'OUTPOST_GATEWAY_KUBE_REQUEST_TIMEOUT_SECONDS',
      'OUTPOST_GATEWAY_KUBE_USER_PREFIX',
      'OUTPOST_GATEWAY_LIMITS_IDLE_CONNECTION_SECONDS',
      'OUTPOST_GATEWAY_LIMITS_MAX_CONCURRENT_STREAMS',
      'OUTPOST_GATEWAY_LIMITS_MAX_REFUSED_REQUESTS_PER_CONNECTION',
      'OUTPOST_GATEWAY_LIMITS_MAX_UNAUTHENTICATED_CONNECTIONS',
      'OUTPOST_GATEWAY_LOG_LEVEL',
      'OUTPOST_GATEWAY_OPERATIONS_AGENT_WAIT_SECONDS',
      'OUTPOST_GATEWAY_OPERATIONS_DEFAULT_TIMEOUT_SECONDS',
      'OUTPOST_GATEWAY_OPERATIONS_MAX_MANIFEST_BYTES',
      'OUTPOST_GATEWAY_OPERATIONS_SWEEP_INTERVAL_MS',
      'OUTPOST_GATEWAY_REPLICAS_CONTEXT',
      'OUTPOST_GATEWAY_REPLICAS_DEAD_AFTER_SECONDS',
      'OUTPOST_GATEWAY_REPLICAS_DISCOVERY',
      'OUTPOST_GATEWAY_REPLICAS_ENDPOINTS_PREFIX',
      'OUTPOST_GATEWAY_REPLICAS_FORWARD_TIMEOUT_SECONDS',
      'OUTPOST_GATEWAY_REPLICAS_HEARTBEAT_INTERVAL_SECONDS',
      'OUTPOST_GATEWAY_REPLICAS_KUBECONFIG_FILE',
      'OUTPOST_GATEWAY_REPLICAS_LEASE_SECONDS',
      'OUTPOST_GATEWAY_REPLICAS_NAMESPACE',
      'OUTPOST_GATEWAY_REPLICAS_PEER_CA_FILE',
      'OUTPOST_GATEWAY_REPLICAS_PORT_NAME',
      'OUTPOST_GATEWAY_REPLICAS_STANDBY_CHECK_INTERVAL_SECONDS',
      'OUTPOST_GATEWAY_SECRETS_KEY_FILE',
      'OUTPOST_GATEWAY_SPINNAKER_ANSWER_CACHE_MEGABYTES',
      'OUTPOST_GATEWAY_SPINNAKER_ARTIFACTS_CONNECT_TIMEOUT_SECONDS',
      'OUTPOST_GATEWAY_SPINNAKER_ARTIFACTS_GIT_REPO_CLONE_DIR',
      'OUTPOST_GATEWAY_SPINNAKER_ARTIFACTS_HTTP_NO_AUTH_ACCOUNT',
      'OUTPOST_GATEWAY_SPINNAKER_ARTIFACTS_MAX_BYTES',
      'OUTPOST_GATEWAY_SPINNAKER_ARTIFACTS_MAX_REDIRECTS',
      'OUTPOST_GATEWAY_SPINNAKER_ARTIFACTS_MAX_REQUEST_BYTES',
      'OUTPOST_GATEWAY_SPINNAKER_ARTIFACTS_TIMEOUT_SECONDS',
      'OUTPOST_GATEWAY_SPINNAKER_ENABLED',
      'OUTPOST_GATEWAY_SPINNAKER_FIAT_BASE_URL',
      'OUTPOST_GATEWAY_SPINNAKER_FIAT_CACHE_TTL_SECONDS',
      'OUTPOST_GATEWAY_SPINNAKER_FIAT_CA_FILE',
      'OUTPOST_GATEWAY_SPINNAKER_FIAT_LEGACY_FALLBACK',
      'OUTPOST_GATEWAY_SPINNAKER_FIAT_MAX_CACHED_USERS',
      'OUTPOST_GATEWAY_SPINNAKER_FIAT_MAX_RESPONSE_BYTES',
      'OUTPOST_GATEWAY_SPINNAKER_FIAT_TIMEOUT_SECONDS',
      'OUTPOST_GATEWAY_SPINNAKER_FIAT_TOKEN_FILE',
      'OUTPOST_GATEWAY_TLS_CA_FILE',
      'OUTPOST_GATEWAY_TLS_CERT_FILE',
      'OUTPOST_GATEWAY_TLS_CLIENT_AUTH',
      'OUTPOST_GATEWAY_TLS_KEY_FILE',
      'OUTPOST_GATEWAY_TLS_RELOAD_INTERVAL_SECONDS',
      'OUTPOST_GATEWAY_WEB_DIR',
      'OUTPOST_GATEWAY_WEB_ENABLED',
      'OUTPOST_GATEWAY_WEB_FLEET_POLL_SECONDS',
    ]);
  });

  test('invalid values are errors naming the key and the problem', () => {
    const cases: [Parameters<typeof loadGatewayConfig>[0], RegExp][] = [
      [{ env: { OUTPOST_GATEWAY_HTTP_PORT: 'abc' } }, /httpPort: .*number/i],
      [{ overrides: { grpcPort: 70000 } }, /grpcPort: .*65535/],
      [
        { overrides: { history: { stepSeconds: 10, accountStepSeconds: 45 } } },
        /history\.accountStepSeconds: .*multiple of history\.stepSeconds/,
      ],
      [
        { overrides: { history: { accountStepSeconds: 60, dayStepSeconds: 60 } } },
        /history\.dayStepSeconds: .*multiple of history\.accountStepSeconds, and larger/,
      ],
      [{ env: { OUTPOST_GATEWAY_HISTORY_STEP_SECONDS: '0' } }, /history\.stepSeconds/],
      [{ overrides: { logLevel: 'loud' as never } }, /logLevel/],
      [{ overrides: { agents: { heartbeatIntervalSeconds: 30, deadAfterSeconds: 10 } } }, /agents\.deadAfterSeconds: must be greater/],
      [{ overrides: { baseUrl: 'not a url' } }, /baseUrl/],
      [{ overrides: { replicas: { heartbeatIntervalSeconds: 5, deadAfterSeconds: 5 } } }, /replicas\.deadAfterSeconds: must be greater/],
      [{ overrides: { replicas: { discovery: 'gossip' as never } } }, /replicas\.discovery/],
      [{ overrides: { bogus: 1 } as never }, /bogus/],
      // rules name their identity kind; an old rule without one says how to fix it
      [
        { overrides: { authorization: { rules: [{ subject: '^ops$', roles: ['read'] }] } as never } },
        /authorization\.rules\.0\.kind: kind is required: set kind: token .* jwt .* certificate/,
      ],
      [
        { overrides: { authorization: { rules: [{ kind: 'token', attributes: { CN: 'x' }, roles: ['read'] }] } } },
        /attributes apply to kind certificate only/,
      ],
      [
        { overrides: { authorization: { rules: [{ kind: 'certificate', roles: ['read'] }] } } },
        /set subject, groups, attributes \(certificates\), or several/,
      ],
      // kubectl through the gateway: the kube role names its accounts; limits and prefixes are checked
      [
        { overrides: { authorization: { rules: [{ kind: 'token', subject: '^a$', roles: ['kube'] }] } } },
        /rules\.0\.accounts: the role kube reaches accounts/,
      ],
      [{ overrides: { kube: { maxConcurrentPerIdentity: 0 } } }, /kube\.maxConcurrentPerIdentity/],
      [{ env: { OUTPOST_GATEWAY_KUBE_REQUEST_TIMEOUT_SECONDS: 'soon' } }, /kube\.requestTimeoutSeconds/],
      [{ overrides: { kube: { userPrefix: 'out post:' } } }, /kube\.userPrefix: printable ASCII, no whitespace/],
      // Token subjects and groups are Kubernetes names too (whitespace the cluster would trim, control characters).
      [
        { overrides: { auth: { tokens: [{ subject: 'ci', token: 'x'.repeat(16), groups: [' system:masters'] }] } } },
        /auth\.tokens\.0\.groups\.0: " system:masters" starts or ends with whitespace/,
      ],
      [
        { overrides: { auth: { tokens: [{ subject: 'ci\t', token: 'x'.repeat(16) }] } } },
        /auth\.tokens\.0\.subject: "ci\\t" holds a control/,
      ],
      [
        { overrides: { auth: { oidc: { providers: [{ name: 'corp', issuer: 'http://idp.example.com', clientId: 'outpost' }] } } } },
        /auth\.oidc\.providers\.0\.issuer: the issuer must be an https:\/\/ URL \(http:\/\/ only to 127\.0\.0\.1, localhost or \[::1\]\)/,
      ],
      [
        { overrides: { auth: { oidc: { providers: [{ name: 'Corp SSO', issuer: 'https://idp.example.com', clientId: 'outpost' }] } } } },
        /auth\.oidc\.providers\.0\.name: a provider name is 1-32 of a-z, 0-9 and "-"/,
      ],
      [
        {
          overrides: {
            auth: {
              oidc: {
                providers: [
                  { name: 'corp', issuer: 'https://idp.example.com', clientId: 'a' },
                  { name: 'corp', issuer: 'https://other.example.com', clientId: 'b' },
                ],
              },
            },
          },
        },
        /auth\.oidc\.providers\.1\.name: name "corp" is also provider 0's/,
      ],
      [{ overrides: { auth: { oidc: { providers: [] } } } }, /auth\.oidc\.providers: /],
      // The dashboard's sessions keep the providers' tokens sealed: a secure gateway needs the key.
      [
        { overrides: { auth: { oidc: { providers: [{ name: 'corp', issuer: 'https://idp.example.com', clientId: 'outpost' }] } } } },
        /secrets\.keyFile: is required with auth\.oidc on a secure gateway/,
      ],
      [
        { overrides: { authorization: { rules: [{ kind: 'oidc', groups: ['(unclosed'], roles: ['read'] }] } } },
        /authorization\.rules\.0\.groups\.0: /,
      ],
    ];
    for (const [opts, pattern] of cases) {
      assert.throws(
        () => loadGatewayConfig(opts),
        (err: unknown) => {
          assert.ok(err instanceof GatewayConfigError);
          assert.match(err.message, pattern);
          return true;
        },
      );
    }
    const oidc = { providers: [{ name: 'corp', issuer: 'https://idp.example.com', clientId: 'outpost' }] };
    assert.ok(loadGatewayConfig({ overrides: { insecure: true, auth: { oidc } } }).auth.oidc, 'insecure mode seals with an ephemeral key');
    assert.ok(loadGatewayConfig({ overrides: { auth: { oidc }, secrets: { keyFile: '/k' } } }).auth.oidc);
    assert.throws(() => loadGatewayConfig({ file: '/no/such/file.yaml' }), /cannot read gateway config file/);
    const dir = mkdtempSync(join(tmpdir(), 'outpost-gw-config-'));
    try {
      writeFileSync(join(dir, 'bad.yaml'), 'httpPort: [1, 2\n');
      assert.throws(() => loadGatewayConfig({ file: join(dir, 'bad.yaml') }), /not valid YAML/);
      writeFileSync(join(dir, 'list.yaml'), '- a\n');
      assert.throws(() => loadGatewayConfig({ file: join(dir, 'list.yaml') }), /mapping/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('`cluster`, the old name of `replicas`, is still accepted in a file, the environment and overrides', () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-gw-config-'));
    try {
      const file = join(dir, 'old.yaml');
      writeFileSync(file, 'cluster:\n  leaseSeconds: 20\n  discovery: database\n');
      const fromFile = loadGatewayConfig({ file });
      assert.equal(fromFile.replicas.leaseSeconds, 20);
      assert.equal('cluster' in fromFile, false);
      const fromEnv = loadGatewayConfig({
        env: { OUTPOST_GATEWAY_CLUSTER_LEASE_SECONDS: '21', OUTPOST_GATEWAY_REPLICAS_DEAD_AFTER_SECONDS: '40' },
      });
      assert.equal(fromEnv.replicas.leaseSeconds, 21);
      assert.equal(fromEnv.replicas.deadAfterSeconds, 40);
      // precedence is by source, whichever name each source uses
      const layered = loadGatewayConfig({
        file,
        env: { OUTPOST_GATEWAY_REPLICAS_LEASE_SECONDS: '22' },
        overrides: { cluster: { leaseSeconds: 23 } } as never,
      });
      assert.equal(layered.replicas.leaseSeconds, 23);
      assert.equal(loadGatewayConfig({ file, env: { OUTPOST_GATEWAY_REPLICAS_LEASE_SECONDS: '22' } }).replicas.leaseSeconds, 22);
      // validation names the current key
      assert.throws(() => loadGatewayConfig({ overrides: { cluster: { discovery: 'gossip' } } as never }), /replicas\.discovery/);
      // both names in one source: which would win is unclear, so it is an error
      writeFileSync(file, 'cluster:\n  leaseSeconds: 20\nreplicas:\n  leaseSeconds: 30\n');
      assert.throws(
        () => loadGatewayConfig({ file }),
        (err: unknown) => err instanceof GatewayConfigError && /sets both `cluster` and `replicas`/.test(err.message),
      );
      assert.throws(
        () => loadGatewayConfig({ env: { OUTPOST_GATEWAY_CLUSTER_LEASE_SECONDS: '21', OUTPOST_GATEWAY_REPLICAS_LEASE_SECONDS: '22' } }),
        /the environment sets both OUTPOST_GATEWAY_CLUSTER_LEASE_SECONDS and OUTPOST_GATEWAY_REPLICAS_LEASE_SECONDS/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
