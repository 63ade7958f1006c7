/**
 * Test harness: a sandbox cluster, the fake gateway and an agent wired together, with captured logs and one
 * `close()` that stops everything (so the test process exits).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { loadAgentConfig, parseAgentConfig, startAgent, type AgentConfigInput, type RunningAgent } from '../../../src/agent/index.js';
import { createLogger } from '../../../src/shared/logger.js';
import { SyncPhase, type ConnectRequest, type Event, type SyncMarker } from '../../../src/gen/outpost/agent/v1/agent_pb.js';
import { captureLogs, type LogCapture } from '../../../testkit/log-capture.js';
import { startFakeGateway, type FakeGateway, type FakeGatewayOptions } from './fake-gateway.js';

/** Options of {@link startHarness}. */
export interface HarnessOptions {
  seed?: 'demo' | 'none' | { scale: number };
  /** Serve the sandbox API over HTTPS (the kubeconfig then carries its CA). */
  sandboxTls?: boolean;
  user?: 'admin' | 'restricted';
  gateway?: FakeGatewayOptions;
  /** Changes to the account entry (kinds, namespaces…). */
  account?: Record<string, unknown>;
  /** Changes to the whole config. */
  config?: Partial<AgentConfigInput>;
  /** Fake gateway options computed once the sandbox runs, merged over `gateway`. */
  gatewayFrom?: (sandbox: Sandbox) => FakeGatewayOptions | Promise<FakeGatewayOptions>;
  /** Config changes computed once the sandbox runs (e.g. files in `dir`), merged over `config`. */
  configFrom?: (dir: string) => Partial<AgentConfigInput> | Promise<Partial<AgentConfigInput>>;
  /** The whole account list (replaces the default `sandbox` account), given the sandbox kubeconfig file. */
  accounts?: (kubeconfigFile: string) => Record<string, unknown>[];
  /** Write the configuration to `<dir>/agent.yaml`, load it from there and let the agent watch it (fast polling). */
  configFile?: boolean;
  /** Called after the sandbox starts, before the agent (e.g. to note a resourceVersion). */
  beforeAgent?: (sandbox: Sandbox) => void | Promise<void>;
}

/** Everything a test needs. */
export interface Harness {
  sandbox: Sandbox;
  gateway: FakeGateway;
  agent: RunningAgent;
  logs: LogCapture;
  /** Temporary directory of the test (kubeconfig, config file…). */
  dir: string;
  kubeconfigFile: string;
  /** With `configFile`: its path and the object written to it (edit a copy and {@link writeConfig} it). */
  configFile?: string;
  rawConfig: Record<string, unknown>;
  /** Rewrites the config file (JSON is YAML) with `raw`. */
  writeConfig(raw: Record<string, unknown> | string): void;
  close(): Promise<void>;
}

/** Starts sandbox → fake gateway → agent (admin port 0, fast reconnects). */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const sandbox = await startSandbox({ seed: options.seed ?? 'demo', bookmarkIntervalMs: 200, tls: options.sandboxTls });
  const dir = mkdtempSync(join(tmpdir(), 'outpost-agent-test-'));
  const kubeconfigFile = join(dir, 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfigFile);
  const gateway = await startFakeGateway({ ...options.gateway, ...(await options.gatewayFrom?.(sandbox)) });
  await options.beforeAgent?.(sandbox);
  const extra = (await options.configFrom?.(dir)) ?? {};
  const logs = captureLogs();
  const rawConfig: Record<string, unknown> = {
    ...options.config,
    ...extra,
    clouddriver: {
      grpc: gateway.address,
      reconnect: { baseSeconds: 0.05, factor: 1.6, maxSeconds: 0.5 },
      ...options.config?.clouddriver,
      ...extra.clouddriver,
    },
    agent: { id: 'test-agent', zone: 'test' },
    server: { port: 0 },
    kubernetes: {
      // Dynamic accounts of the tests use the harness's kubeconfig (a config file would allow its own directory).
      dynamicKubeconfigDirs: [dir],
      ...options.config?.kubernetes,
      accounts: options.accounts?.(kubeconfigFile) ?? [
        {
          name: 'sandbox',
          kubeconfigFile,
          context: options.user === 'restricted' ? 'sandbox-restricted' : 'sandbox',
          ...options.account,
        },
      ],
    },
  };
  const configFile = options.configFile ? join(dir, 'agent.yaml') : undefined;
  const writeConfig = (raw: Record<string, unknown> | string) => {
    if (configFile === undefined) throw new Error('startHarness({ configFile: true }) to write a config file');
    writeFileSync(configFile, typeof raw === 'string' ? raw : JSON.stringify(raw, null, 2));
  };
  let config;
  if (configFile !== undefined) {
    writeConfig(rawConfig);
    config = loadAgentConfig(configFile, {});
  } else config = parseAgentConfig(rawConfig, {});
  const agent = await startAgent(config, {
    logger: createLogger({ level: 'debug', destination: logs.stream }),
    configFile,
    env: {},
    configPollMs: 200,
  });
  return {
    sandbox,
    gateway,
    agent,
    logs,
    dir,
    kubeconfigFile,
    configFile,
    rawConfig,
    writeConfig,
    async close() {
      await agent.close();
      await gateway.close();
      await sandbox.close();
    },
  };
}

/** Events of a list of requests, flattened. */
export function eventsOf(messages: ConnectRequest[]): Event[] {
  return messages.flatMap((m) => (m.message.case === 'events' ? m.message.value.events : []));
}

/** Markers of a list of requests. */
export function markersOf(messages: ConnectRequest[]): SyncMarker[] {
  return messages.flatMap((m) => (m.message.case === 'sync' ? [m.message.value] : []));
}

/** END markers of one kind. */
export function endMarkers(messages: ConnectRequest[], kind: string): SyncMarker[] {
  return markersOf(messages).filter((m) => m.kind === kind && m.phase === SyncPhase.END);
}
