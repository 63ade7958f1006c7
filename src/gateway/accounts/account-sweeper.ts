/**
 * Times out account changes no agent confirmed: an account ACTIVATING (pushed to agents, not yet cached) for longer
 * than `activationTimeoutSeconds` becomes FAILED, and so does one DEACTIVATING (told to stop) that is still
 * streamed then. Runs on every replica; the conditional update (account-sweep-queries.ts) makes concurrent sweeps
 * harmless.
 */
import type { Database } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import { createPeriodicJob } from '../../shared/periodic-job.js';
import { failTimedOutChanges } from './account-sweep-queries.js';

/** A started sweeper. */
export interface AccountSweeper {
  /** One pass now (tests); resolves with the accounts it failed. */
  sweep(): Promise<string[]>;
  start(): void;
  /** Stops the timer; an in-flight pass finishes on its own (awaited by `stop`). */
  stop(): Promise<void>;
}

/** Creates the sweeper; call `start()` to run it every `intervalMs`. */
export function createAccountSweeper(deps: {
  database: Database;
  timeoutSeconds: number;
  intervalMs: number;
  logger: Logger;
}): AccountSweeper {
  const sweep = async (): Promise<string[]> => {
    const failed = await failTimedOutChanges(deps.database.db, deps.timeoutSeconds);
    if (failed.length === 0) return [];
    const names = failed.map((f) => f.name);
    deps.logger.warn({ accounts: names }, 'account changes timed out; accounts FAILED');
    return names;
  };
  const job = createPeriodicJob({ run: sweep, intervalMs: deps.intervalMs, logger: deps.logger, errorMessage: 'account sweep failed' });
  return { sweep, start: () => job.start(), stop: () => job.stop() };
}
