/**
 * Fencing of cache writes by the account ownership lease (docs/architecture.md, rule 4). A stream's writes carry the session id
 * and, per account, the epoch its lease was granted with; the write statement locks the accounts' rows and goes
 * through only for accounts whose row still names that session and epoch with an unexpired lease (the SQL of that
 * check is in src/gateway/accounts/account-lease-queries.ts). A replica that lost the lease (paused past its expiry,
 * cut off from the database while another replica took over) therefore cannot change the cache: its write fails with
 * {@link LeaseLostError} and changes nothing for that account.
 */
import { Code, ConnectError } from '@connectrpc/connect';

/** One account's lease as a write presents it. */
interface FencedLease {
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
