/**
 * The Outpost agent: watches the configured clusters and streams their objects to the gateway over one outbound
 * HTTP/2 gRPC stream (see `proto/outpost/agent/v1/agent.proto`). This module is its programmatic entry point, used by
 * the CLI (`outpost agent`), the demo and end-to-end tests. It builds the core (modules/agent-core.ts) and starts one
 * list of modules in order (modules/module-list.ts); they stop in reverse through one stack of closers.
 */
import type { Logger } from 'pino';
import { createClosers } from '../shared/closers.js';
import { createSilentLogger } from '../shared/logger.js';
import type { AgentConfig } from './config/schema.js';
import { createAgentCore } from './modules/agent-core.js';
import { startAgentModules } from './modules/module.js';
import { AGENT_MODULES } from './modules/module-list.js';
import type { AgentStatus } from './status.js';

export type { AgentConfig, AgentConfigInput } from './config/schema.js';
export { loadAgentConfig, parseAgentConfig, AgentConfigError } from './config/load.js';
export { AGENT_DEFAULTS } from './config/defaults.js';
export type { AgentStatus } from './status.js';

/** Optional collaborators and settings of {@link startAgent}. */
export interface StartAgentDeps {
  logger?: Logger;
  /**
   * The file `config` was loaded from: it is then watched, and account changes in it take effect without a restart
   * (other settings need one). Relative kubeconfig paths of dynamic accounts are resolved against its directory.
   */
  configFile?: string;
  /** Environment for the overrides when the file is reloaded (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** How often the file is checked (default AGENT_DEFAULTS.configPollMs). */
  configPollMs?: number;
  /** Hears the name of each shutdown step just before it runs (tests check the order the agent stops in). */
  onStopStep?: (step: string) => void;
}

/** A started agent. */
export interface RunningAgent {
  /** The agent id sent in the Hello. */
  readonly id: string;
  /** The local admin port actually bound (useful when `server.port` is 0). */
  readonly adminPort: number;
  /** The Prometheus port actually bound; undefined when `prometheus.enabled` is false. */
  readonly metricsPort: number | undefined;
  /** A snapshot of the connection, accounts and watches. */
  status(): AgentStatus;
  /** Closes the stream, stops every watch, the admin and the metrics servers. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the agent: binds the admin port and the metrics port, watches the config file when given, then connects to
 * the gateway in the background and keeps retrying with backoff forever. Resolves once started (not necessarily
 * connected); rejects only if the admin or metrics port cannot be bound. The caller must `close()` it.
 */
export async function startAgent(config: AgentConfig, deps: StartAgentDeps = {}): Promise<RunningAgent> {
  const logger = deps.logger ?? createSilentLogger();
  // Every part registers how it stops as soon as it started: close() runs them in reverse order, and so does a start
  // that fails half-way (only what started is stopped). The modules and their order: modules/module-list.ts.
  let log: Logger = logger;
  const closers = createClosers((step, err) => log.warn({ err, step }, 'stopping a part of the agent failed'), deps.onStopStep);
  const core = createAgentCore(config, { configFile: deps.configFile, env: deps.env, configPollMs: deps.configPollMs }, logger, closers);
  log = core.log;
  try {
    const parts = await startAgentModules(AGENT_MODULES, core);
    log.info(
      {
        adminPort: parts.adminPort,
        metricsPort: parts.metricsPort,
        gateway: config.clouddriver.grpc,
        accounts: core.state.accounts.length,
        zone: core.zone,
        configFile: deps.configFile,
      },
      'agent started',
    );
    let closing: Promise<void> | undefined;
    return {
      id: core.id,
      adminPort: parts.adminPort!,
      metricsPort: parts.metricsPort,
      status: core.status,
      close() {
        closing ??= closers.close().then(() => log.info('agent stopped'));
        return closing;
      },
    };
  } catch (err) {
    await closers.close();
    throw err;
  }
}
