/**
 * Fencing of cache writes by the account ownership lease (docs/architecture.md, rule 4). A stream's writes carry the session id
 * and, per account, the epoch its lease was granted with; the write statement locks the accounts' rows and goes
 * through only for accounts whose row still names that session and epoch with an unexpired lease. A replica that lost
 * the lease (paused past its expiry, cut off from the database while another replica took over) therefore cannot
 * change the cache: its write fails with {@link LeaseLostError} and changes nothing for that account.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../accounts/account-states.js';

/** One account's lease as a write presents it. */
export interface FencedLease {
  name: string;
  epoch: number;
}

/** What a fenced write presents: the writing session and the leases it holds for the accounts written. */
export interface WriteFence {
  sessionId: string;
  leases: FencedLease[];
}

const LEASE_LOST = Symbol('outpost.leaseLost');

/**
 * A write (or other owner-only step) refused because this replica no longer holds the account's lease. Test for it
 * with {@link isLeaseLost}: `instanceof` goes through ConnectError's own check and matches every ConnectError.
 */
export class LeaseLostError extends ConnectError {
  readonly accounts: string[];
  readonly [LEASE_LOST] = true;
  constructor(accounts: string[]) {
    super(
      `this gateway replica no longer owns account${accounts.length > 1 ? 's' : ''} ${accounts.join(', ')} (its lease expired or was taken over); reconnect`,
      Code.Aborted,
    );
    // The name stays "ConnectError": ConnectError's instanceof check relies on it.
    this.accounts = accounts;
  }
}

/** True for a {@link LeaseLostError}. */
export function isLeaseLost(err: unknown): err is LeaseLostError {
  return typeof err === 'object' && err !== null && (err as { [LEASE_LOST]?: boolean })[LEASE_LOST] === true;
}

/**
 * SQL condition (over table alias `alias` of `accounts`) that the row is leased to the fence's session with the epoch
 * listed for it in the JSON parameter this function embeds.
 */
export function leasedCondition(fence: WriteFence, alias: string): SQL {
  const a = sql.raw(alias);
  return sql`${a}.session_id = ${fence.sessionId}
    and ${a}.lease_expires_at > now()
    and (${a}.name, ${a}.lease_epoch) in (
      select f.name, f.epoch from json_to_recordset(${JSON.stringify(fence.leases)}::json) as f(name text, epoch bigint))`;
}

/**
 * Inside a transaction: locks (FOR SHARE, so a concurrent takeover waits for this transaction) the accounts rows the
 * fence still holds, and throws {@link LeaseLostError} naming those it does not.
 */
export async function assertLeases(tx: DbOrTx, fence: WriteFence): Promise<void> {
  if (fence.leases.length === 0) return;
  const result = await tx.execute(sql`select a.name from accounts a where ${leasedCondition(fence, 'a')} for share of a`);
  const held = new Set(rowsOf(result).map((r) => String(r.name)));
  const lost = fence.leases.map((l) => l.name).filter((n) => !held.has(n));
  if (lost.length > 0) throw new LeaseLostError(lost);
}

/** The rows of a `db.execute` result on either driver (postgres-js: an array; PGlite: `{rows}`). */
export function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  return ((result as { rows?: Record<string, unknown>[] }).rows ?? []) as Record<string, unknown>[];
}
