/**
 * Waiting for accounts to come up: the step between starting agents and using their clusters through the gateway,
 * which every end-to-end suite takes. Reads the gateway's own account listing (Connect JSON), as a client would.
 */
import { eventually } from './eventually.js';

/** Options of {@link waitForAccounts}. */
export interface WaitForAccountsOptions {
  /** Headers of the listing request (`authorization` when the gateway checks credentials). */
  headers?: Record<string, string>;
  /** Bound of the wait (default: ./eventually.ts's). */
  timeoutMs?: number;
}

/**
 * Resolves once the gateway at `gatewayUrl` (its HTTP URL) lists every account of `names` as ACTIVE with a connected
 * agent. The timeout only bounds a hang; its error names the accounts wanted and those ready.
 */
export async function waitForAccounts(gatewayUrl: string, names: string[], options: WaitForAccountsOptions = {}): Promise<void> {
  await eventually(
    `accounts ${names.join(', ')} ACTIVE with an agent`,
    async () => {
      const res = await fetch(`${gatewayUrl}/outpost.api.v1.AccountService/ListAccounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...options.headers },
        body: '{}',
      });
      const body = (await res.json()) as { accounts?: { name: string; state: string; agentId?: string }[] };
      const ready = new Set((body.accounts ?? []).filter((a) => a.state === 'ACTIVE' && a.agentId).map((a) => a.name));
      if (!names.every((n) => ready.has(n))) throw new Error(`ready: ${[...ready].join(', ') || 'none'}`);
      return true;
    },
    { timeoutMs: options.timeoutMs },
  );
}
