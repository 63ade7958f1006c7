/**
 * The agent's connections to the gateway (`clouddriver.connections`): one, or two kept on different replicas. Each
 * connection has a session state of its own — its own account runtimes (verdict, watches) sharing the accounts'
 * preparation and Kubernetes clients — because the two sessions get different verdicts for the same account: the
 * gateway's fenced leases make one CACHING and the other STANDBY, and promote the standby when the other goes.
 */
import { createAccountRuntime, type AccountRuntime } from '../accounts/account-runtime.js';
import type { SessionState } from './session.js';

/** The state of a further connection: the same accounts as `primary`, with runtimes of its own. */
export function createMirrorState(primary: SessionState): SessionState {
  return {
    connected: false,
    accounts: primary.accounts.map((a) => createAccountRuntime(a.prepared, a.source)),
    lastChangeId: 0n,
  };
}

/**
 * One runtime per account for the agent's status: the one of the connection caching it when there is one, else the
 * first connection's (with one connection, simply the accounts).
 */
export function servingRuntimes(states: readonly SessionState[]): AccountRuntime[] {
  const [primary, ...others] = states;
  if (primary === undefined) return [];
  if (others.length === 0) return primary.accounts;
  return primary.accounts.map((account) => {
    if (account.verdict === 'caching') return account;
    const name = account.prepared.config.name;
    for (const state of others) {
      const mirror = state.accounts.find((a) => a.prepared.config.name === name);
      if (mirror?.verdict === 'caching') return mirror;
    }
    return account;
  });
}
