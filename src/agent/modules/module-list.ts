/**
 * The agent's modules, in start order; they stop in reverse. On `close()` the agent runs, each step awaited: the stop
 * signal (streams, watches and retries end), the connection loops, the config file watcher, the token source, the
 * account preparation under way, the operation runners, the Kubernetes clients, the metrics server, the admin server.
 */
import { accountsModule } from './accounts-module.js';
import { configWatcherModule } from './config-watcher-module.js';
import { connectionModule, tokenModule } from './connection-module.js';
import type { AgentModule } from './module.js';
import { operationsModule } from './operations-module.js';
import { adminServerModule, metricsServerModule } from './servers-modules.js';

/** Every module of the agent, in start order. */
export const AGENT_MODULES: readonly AgentModule[] = [
  adminServerModule,
  metricsServerModule,
  operationsModule,
  accountsModule,
  tokenModule,
  configWatcherModule,
  connectionModule,
];
