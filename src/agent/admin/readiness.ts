/**
 * Readiness of the agent (`GET /health`): ready once it holds a welcomed stream to the gateway and every account has
 * either finished its initial sync (each of its watch scopes listed once, or resumed without listing) or been
 * reported to the gateway in a way that needs no sync (STANDBY, REFUSED, or a cluster it cannot reach). A later
 * re-list (410 Gone) does not make it unready again: the gateway keeps serving the cache it has meanwhile.
 */
import type { AccountStatus, AgentStatus } from '../status.js';
import { counted } from '../../shared/counted.js';

/** Why one account is not settled yet. */
interface PendingAccount {
  name: string;
  /** `verdict`: the gateway has not answered for it yet; `listing`: some of its scopes are still in their first list. */
  waiting: 'verdict' | 'listing';
  /** With `listing`: the kinds (`Kind` or `Kind in namespace`) not synced yet. */
  scopes?: string[];
}

/** The `/health` answer. */
export interface Readiness {
  ready: boolean;
  connected: boolean;
  sessionId: string | null;
  accounts: { ready: number; total: number; pending: PendingAccount[] };
  /** Why the agent is not ready (absent when ready). */
  reason?: string;
}

/** Whether one account needs nothing more; otherwise what it waits for. */
function pendingOf(account: AccountStatus): PendingAccount | undefined {
  if (account.verdict === 'standby' || account.verdict === 'refused' || account.error) return undefined;
  if (account.verdict === 'unknown') return { name: account.name, waiting: 'verdict' };
  const unsynced = account.watches.filter((w) => !w.synced);
  if (unsynced.length === 0) return undefined;
  return { name: account.name, waiting: 'listing', scopes: unsynced.map((w) => (w.namespace ? `${w.kind} in ${w.namespace}` : w.kind)) };
}

function describe(pending: PendingAccount[]): string {
  const shown = pending
    .slice(0, 10)
    .map((p) => (p.waiting === 'verdict' ? `${p.name} (no verdict from the gateway yet)` : `${p.name} (listing ${p.scopes!.join(', ')})`));
  const more = pending.length > shown.length ? ` and ${pending.length - shown.length} more` : '';
  return `${counted(pending.length, 'account')} not synced yet: ${shown.join('; ')}${more}`;
}

/** Computes readiness from a status snapshot. */
export function readiness(status: AgentStatus): Readiness {
  const pending = status.accounts.flatMap((a) => pendingOf(a) ?? []);
  const base = {
    connected: status.connected,
    sessionId: status.sessionId ?? null,
    accounts: { ready: status.accounts.length - pending.length, total: status.accounts.length, pending },
  };
  if (!status.connected) return { ready: false, ...base, reason: 'not connected to the gateway' };
  if (pending.length > 0) return { ready: false, ...base, reason: describe(pending) };
  return { ready: true, ...base };
}
