/**
 * Cleans up agent accounts nobody serves any more: an account registered by an agent (source `agent`) that has been
 * INACTIVE (no agent caching it) for longer than `graceSeconds` is deleted with its cached objects and watch state,
 * so it leaves the listing and its name binding is released (what the reference does after its grace period). A
 * rolling restart shorter than the grace period keeps the cache: the reconnecting agent makes the account ACTIVE
 * again and resumes from the stored resourceVersions.
 *
 * Kept: dynamic accounts (an admin defined them), accounts an admin deactivated (their refusal must survive), and
 * accounts that a live agent session still offers (standby or caching) according to its recent `last_seen_at`.
 *
 * Runs on every replica. Each account is removed by one conditional DELETE that re-checks all of the above (state,
 * age, no live session) under the row lock (account-sweep-queries.ts), so concurrent sweepers remove it once and an
 * account re-activated in the meantime is left alone; its objects and watch state are removed in the same transaction.
 */
import type { Database } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import { createPeriodicJob } from '../../shared/periodic-job.js';
import type { RemoveCaches } from './account-claim-queries.js';
import { findAccountsWithoutAgent, removeAccountWithoutAgent, type CleanedAccount } from './account-sweep-queries.js';

/** A started cleanup sweeper. */
export interface AccountCleanup {
  /** One pass now (tests); resolves with the accounts this pass removed. */
  sweep(): Promise<CleanedAccount[]>;
  start(): void;
  /** Stops the timer; an in-flight pass is awaited. */
  stop(): Promise<void>;
}

/** Options of {@link createAccountCleanup}. */
export interface AccountCleanupOptions {
  database: Database;
  /** `accounts.cleanupGraceSeconds`: how long an agent account may stay without an agent before it is removed. */
  graceSeconds: number;
  intervalMs: number;
  logger: Logger;
  /** The cache's removal of an account's objects and watch states (cache/cache-removal.ts), run in the same transaction. */
  removeCaches: RemoveCaches;
}

/** Creates the sweeper; call `start()` to run it every `intervalMs`. */
export function createAccountCleanup(options: AccountCleanupOptions): AccountCleanup {
  const { db } = options.database;
  const { graceSeconds, logger } = options;

  const sweep = async (): Promise<CleanedAccount[]> => {
    const cleaned: CleanedAccount[] = [];
    for (const name of await findAccountsWithoutAgent(db, graceSeconds)) {
      const done = await removeAccountWithoutAgent(db, name, graceSeconds, options.removeCaches);
      if (!done) continue;
      cleaned.push(done);
      logger.info(
        { account: name, withoutAgentSeconds: done.withoutAgentSeconds, graceSeconds },
        `account ${name} had no agent for ${done.withoutAgentSeconds}s; its cache was cleaned up and the account removed`,
      );
    }
    return cleaned;
  };
  const job = createPeriodicJob({ run: sweep, intervalMs: options.intervalMs, logger, errorMessage: 'account cleanup failed' });
  return { sweep, start: () => job.start(), stop: () => job.stop() };
}
