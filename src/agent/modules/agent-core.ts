/**
 * The agent's core: what its modules are built from and none owns — the configuration, the logger, the id and zone,
 * the session state of each connection to the gateway, the metrics, the operation runners (one per connection), the
 * stop signal of the streams and watches, and the status the admin server reports. Creating it opens nothing and
 * starts nothing: the modules do (module-list.ts), registering their stops on `closers`.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Closers } from '../../shared/closers.js';
import { createAccountRuntime, unpreparedAccount } from '../accounts/account-runtime.js';
import { AGENT_DEFAULTS } from '../config/defaults.js';
import type { AgentConfig } from '../config/schema.js';
import { createAgentMetrics, type AgentMetrics } from '../metrics/agent-metrics.js';
import { createOperationRunner, type AccountLookup, type OperationRunner } from '../operations/operation-runner.js';
import type { AgentStatus } from '../status.js';
import { createMirrorState } from '../stream/agent-connections.js';
import type { SessionState } from '../stream/session.js';
import { agentStatus } from './agent-status.js';

/** What the caller of startAgent hands the modules (StartAgentDeps without the logger). */
export interface AgentCoreDeps {
  /** The file the config was loaded from: watched when given; relative kubeconfig paths resolve against its folder. */
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  configPollMs?: number;
}

/** The core every agent module is built from. Modules read it; they register their own stops on `closers`. */
export interface AgentCore {
  readonly config: AgentConfig;
  readonly deps: AgentCoreDeps;
  /** The agent's logger (with its id). */
  readonly log: Logger;
  readonly closers: Closers;
  /** The agent id sent in the Hello. */
  readonly id: string;
  readonly zone: string;
  /** The first connection's state, which owns the accounts; `states` holds it and its mirrors (one per connection). */
  readonly state: SessionState;
  readonly states: readonly SessionState[];
  readonly metrics: AgentMetrics;
  /** One runner per connection: a result goes back on the session its operation came from. No timer until one runs. */
  readonly runners: readonly OperationRunner[];
  /** Aborted first at close: the streams, the watches and the retries stop. */
  readonly stop: AbortController;
  /** A snapshot of the connections, accounts, watches and operations. */
  status(): AgentStatus;
}

/** Creates the core of one agent (nothing opened, nothing started). */
export function createAgentCore(config: AgentConfig, deps: AgentCoreDeps, logger: Logger, closers: Closers): AgentCore {
  const id = config.agent.id ?? (process.env.POD_NAME || hostname());
  const zone = config.agent.zone ?? (process.env.POD_NAMESPACE || AGENT_DEFAULTS.zone);
  const state: SessionState = {
    connected: false,
    accounts: config.kubernetes.accounts.map((account) => createAccountRuntime(unpreparedAccount(account), 'file')),
    lastChangeId: 0n,
  };
  // One state per connection to the gateway (clouddriver.connections): stream/agent-connections.ts.
  const states: SessionState[] = [state];
  for (let i = 1; i < config.clouddriver.connections; i++) states.push(createMirrorState(state));
  const metrics = createAgentMetrics({
    connected: () => states.some((s) => s.connected),
    watchesOpen: () =>
      states.reduce((total, s) => total + s.accounts.reduce((n, a) => n + a.watches.filter((w) => w.state === 'watching').length, 0), 0),
    unackedBatches: () => states.reduce((n, s) => n + (s.live?.unacked() ?? 0), 0),
  });
  const log = logger.child({ agentId: id });
  const runners = states.map((connectionState) =>
    createOperationRunner({
      account: (name) => servedAccount(connectionState, name),
      settings: {
        serverSideApplyKinds: config.kubernetes.serverSideApply,
        defaultFieldManager: AGENT_DEFAULTS.fieldManager,
        deletePollMs: 50,
      },
      retries: config.kubernetes.retries,
      concurrency: config.operations.concurrency,
      resultCacheSize: config.operations.resultCacheSize,
      resultTtlMs: config.operations.resultTtlSeconds * 1000,
      outboxSize: config.operations.outboxSize,
      logger: log,
    }),
  );
  return {
    config,
    deps,
    log,
    closers,
    id,
    zone,
    state,
    states,
    metrics,
    runners,
    stop: new AbortController(),
    status: () => agentStatus(state, states, runners),
  };
}

/**
 * Whether the agent runs operations for an account right now: it must be configured, have a Kubernetes client, and
 * not be refused (or left without a verdict) by the gateway in the current session.
 */
function servedAccount(state: SessionState, name: string): AccountLookup {
  const account = state.accounts.find((a) => a.prepared.config.name === name);
  if (account === undefined) return { notServed: `account "${name}" is not configured on this agent` };
  if (account.verdict === 'refused')
    return { notServed: `account "${name}" was refused by the gateway${account.reason ? `: ${account.reason}` : ''}` };
  if (account.verdict === 'unknown') return { notServed: `account "${name}" has no verdict from the gateway in this session` };
  const client = account.prepared.client;
  if (client === undefined) return { notServed: `account "${name}" cannot reach its cluster: ${account.prepared.error || 'no client'}` };
  return { client };
}
