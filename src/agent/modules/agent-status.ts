/**
 * The agent's status as the admin server reports it (`/status`): the connections, the accounts and their watches of
 * every connection, and the operations running. Read on demand from the live state; holds nothing.
 */
import type { OperationRunner } from '../operations/operation-runner.js';
import type { AgentStatus } from '../status.js';
import { servingRuntimes } from '../stream/agent-connections.js';
import type { SessionState } from '../stream/session.js';

/** A snapshot: `state` is the first connection's, `states` every connection's, `runners` one per connection. */
export function agentStatus(state: SessionState, states: readonly SessionState[], runners: readonly OperationRunner[]): AgentStatus {
  return {
    operations: {
      active: runners.reduce((n, r) => n + r.active, 0),
      pendingResults: runners.reduce((n, r) => n + r.pending, 0),
      running: runners.flatMap((r) =>
        r.list().map((op) => ({ id: op.id, account: op.account, kind: op.kind, state: op.state, startedAt: op.receivedAt })),
      ),
    },
    connected: states.some((s) => s.connected),
    sessionId: state.sessionId,
    transport: state.transport && { ...state.transport },
    ...(states.length > 1
      ? {
          connections: states.map((s, connection) => ({
            connection,
            connected: s.connected,
            sessionId: s.sessionId,
            gatewayId: s.gatewayId,
            transport: s.transport?.kind,
          })),
        }
      : {}),
    accounts: servingRuntimes([...states]).map((a) => ({
      name: a.prepared.config.name,
      source: a.source,
      verdict: a.verdict,
      reason: a.reason ?? (a.prepared.error || undefined),
      error: a.prepared.error || undefined,
      watches: a.watches.map((w) => ({
        apiVersion: w.apiVersion,
        kind: w.kind,
        namespace: w.namespace,
        state: w.state,
        resourceVersion: w.resourceVersion,
        listed: w.listed,
        synced: w.synced,
        startedAt: w.startedAt,
      })),
      skipped: a.prepared.skipped.map((s) => ({ ...s })),
    })),
  };
}
