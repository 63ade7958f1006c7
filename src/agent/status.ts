/**
 * The agent's observable state (for `RunningAgent.status()` and the admin endpoint). Snapshots are plain data.
 */
import type { WatchState } from './watch/scope-watcher.js';

/** One watch scope as reported by {@link AgentStatus}. */
export interface WatchStatus {
  apiVersion: string;
  kind: string;
  /** '' for a cluster-wide watch. */
  namespace: string;
  state: WatchState['state'];
  resourceVersion: string;
  /** Objects listed by the running (or last) full list of this scope. */
  listed: number;
  /** True once the scope's first full list ended (or it resumed from a resourceVersion without listing). */
  synced: boolean;
  /** When the watcher started (ms since the epoch); unchanged as long as the same watch keeps running. */
  startedAt: number;
}

/** One account as reported by {@link AgentStatus}. */
export interface AccountStatus {
  name: string;
  /** Where the account is defined: the config file, or a gateway command (dynamic account). */
  source: 'file' | 'dynamic';
  /** The gateway's verdict in the current session: 'caching' | 'standby' | 'refused' | 'unknown' (not welcomed yet). */
  verdict: 'caching' | 'standby' | 'refused' | 'unknown';
  /** The gateway's reason for a standby/refused verdict, or the cluster error. */
  reason?: string;
  /** Why the agent cannot reach the account's cluster (kubeconfig, connection, discovery), when it cannot. */
  error?: string;
  watches: WatchStatus[];
  skipped: { apiVersion: string; kind: string; reason: string }[];
}

/** One operation the agent holds, as reported by {@link AgentStatus}. */
interface OperationStatus {
  id: string;
  account: string;
  /** The operation type: apply, delete, scale, patch, rollout, get, list, logs… */
  kind: string;
  /** `waiting` for a slot (`operations.concurrency` reached) or `running`. */
  state: 'waiting' | 'running';
  /** When the agent received it (ms since the epoch). */
  startedAt: number;
}

/** Operations as reported by {@link AgentStatus}. */
interface OperationsStatus {
  /** Running or waiting for a slot. */
  active: number;
  /** Results waiting for a stream to the gateway. */
  pendingResults: number;
  /** The operations counted by `active`, oldest first. */
  running: OperationStatus[];
}

/** A snapshot of the agent. */
export interface AgentStatus {
  connected: boolean;
  sessionId?: string;
  /** The transport of the current or last connection attempt (`grpc` or `websocket`), why, and the URL dialled. */
  transport?: { kind: 'grpc' | 'websocket'; reason: string; url: string };
  /** With `clouddriver.connections: 2`: each connection's state (the replica it reached, its transport). */
  connections?: Array<{ connection: number; connected: boolean; sessionId?: string; gatewayId?: string; transport?: 'grpc' | 'websocket' }>;
  accounts: AccountStatus[];
  operations: OperationsStatus;
}
