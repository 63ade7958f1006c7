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
  watches: WatchStatus[];
  skipped: { apiVersion: string; kind: string; reason: string }[];
}

/** Operations as reported by {@link AgentStatus}. */
export interface OperationsStatus {
  /** Running or waiting for a slot. */
  active: number;
  /** Results waiting for a stream to the gateway. */
  pendingResults: number;
}

/** A snapshot of the agent. */
export interface AgentStatus {
  connected: boolean;
  sessionId?: string;
  accounts: AccountStatus[];
  operations: OperationsStatus;
}
