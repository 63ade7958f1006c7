/**
 * Config files for the multi-process gateway cluster ({@link ./gateway-cluster.ts}). Configs are plain
 * objects written as YAML and never validated here, so tests can pass keys the gateway or agent schema does not know
 * yet (the child process is the one that accepts or rejects them).
 */
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

/** A plain configuration object (what a YAML file holds). */
export type ConfigObject = { [key: string]: unknown };

function isPlainObject(value: unknown): value is ConfigObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `base` with `override` merged in: nested objects merge key by key; arrays and scalars replace; `undefined` is skipped. */
export function deepMerge(base: ConfigObject, override: ConfigObject = {}): ConfigObject {
  const out: ConfigObject = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue;
    out[key] = isPlainObject(value) && isPlainObject(out[key]) ? deepMerge(out[key] as ConfigObject, value) : value;
  }
  return out;
}

/** Writes `config` as YAML to `path`. */
export function writeYaml(path: string, config: ConfigObject): void {
  writeFileSync(path, stringify(config));
}

/** Settings of one gateway process. */
export interface GatewayProcessSettings {
  id: string;
  httpPort: number;
  grpcPort: number;
  databaseUrl: string;
  logLevel: string;
}

/**
 * The gateway config: insecure, on 127.0.0.1, database discovery and agent heartbeats fast enough that a dead replica
 * or stream is noticed in about 2 s. `extra` is deep-merged over it.
 */
export function gatewayConfig(settings: GatewayProcessSettings, extra?: ConfigObject): ConfigObject {
  return deepMerge(
    {
      id: settings.id,
      host: '127.0.0.1',
      httpPort: settings.httpPort,
      grpcPort: settings.grpcPort,
      database: settings.databaseUrl,
      logLevel: settings.logLevel,
      insecure: true,
      agents: { heartbeatIntervalSeconds: 0.5, deadAfterSeconds: 2 },
      replicas: { discovery: 'database', heartbeatIntervalSeconds: 0.5, deadAfterSeconds: 2 },
    },
    extra,
  );
}

/** One account of a test agent, in process (./stack.ts) or not (./gateway-cluster.ts). */
export interface AgentAccount {
  /** Default `sandbox`. */
  name?: string;
  /** `restricted` uses the sandbox's restricted user (context `sandbox-restricted`). */
  user?: 'admin' | 'restricted';
  namespaces?: string[];
  kinds?: string[];
  omitKinds?: string[];
}

/** The agent config entry (under `kubernetes.accounts`) of `account`, reading the sandbox kubeconfig file `kubeconfig`. */
export function agentAccountEntry(account: AgentAccount, kubeconfig: string): ConfigObject {
  const entry: ConfigObject = { name: account.name ?? 'sandbox', kubeconfigFile: kubeconfig };
  if (account.user === 'restricted') entry.context = 'sandbox-restricted';
  if (account.namespaces) entry.namespaces = account.namespaces;
  if (account.kinds) entry.kinds = account.kinds;
  if (account.omitKinds) entry.omitKinds = account.omitKinds;
  return entry;
}

/** Settings of one agent process. */
export interface AgentProcessSettings {
  id: string;
  /** Gateway gRPC address, host:port (the balancer). */
  grpc: string;
  kubeconfig: string;
  accounts: AgentAccount[];
  logLevel: string;
}

/**
 * The agent config: plaintext gRPC to `grpc`, admin port 0, a 1 s heartbeat until the gateway's Welcome sets its own,
 * and reconnect backoff capped at 0.5 s so a reconnect takes well under a second. `extra` is deep-merged over it
 * (arrays such as `kubernetes.accounts` are replaced, not merged).
 */
export function agentConfig(settings: AgentProcessSettings, extra?: ConfigObject): ConfigObject {
  const accounts = settings.accounts.map((a) => agentAccountEntry(a, settings.kubeconfig));
  return deepMerge(
    {
      clouddriver: {
        grpc: settings.grpc,
        insecure: true,
        // Whole seconds only (the schema says so); the gateway's Welcome replaces it with its own interval.
        keepAliveHeartbeatSeconds: 1,
        reconnect: { baseSeconds: 0.1, factor: 1.5, maxSeconds: 0.5 },
      },
      agent: { id: settings.id },
      server: { port: 0 },
      logging: { level: settings.logLevel },
      kubernetes: { accounts },
    },
    extra,
  );
}
