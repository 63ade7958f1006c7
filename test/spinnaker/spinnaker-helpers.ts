/**
 * Shared helpers of the Spinnaker suites.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Waits until the gateway lists every account as ACTIVE with a connected agent (bounds a hang only). */
export async function waitForAccounts(
  gatewayUrl: string,
  names: string[],
  headers: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${gatewayUrl}/outpost.api.v1.AccountService/ListAccounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: '{}',
    });
    const body = (await res.json()) as { accounts?: { name: string; state: string; agentId?: string }[] };
    const ready = new Set((body.accounts ?? []).filter((a) => a.state === 'ACTIVE' && a.agentId).map((a) => a.name));
    if (names.every((n) => ready.has(n))) return;
    if (Date.now() > deadline) throw new Error(`accounts not registered in time: want ${names.join()}, have ${[...ready].join()}`);
    await sleep(50);
  }
}
