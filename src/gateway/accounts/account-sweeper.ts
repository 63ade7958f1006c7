/**
 * Times out account changes no agent confirmed: an account ACTIVATING (pushed to agents, not yet cached) for longer
 * than `activationTimeoutSeconds` becomes FAILED, and so does one DEACTIVATING (told to stop) that is still
 * streamed then. Runs on every replica; the conditional update makes concurrent sweeps harmless.
 */
import { and, inArray, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { accounts } from '../../db/schema.js';
import type { Logger } from '../../shared/logger.js';
import { GATEWAY_ACTOR, recordTransitions } from './account-states.js';

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
  const { db } = deps.database;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  const sweep = async (): Promise<string[]> => {
    const cutoff = sql`now() - make_interval(secs => ${deps.timeoutSeconds})`;
    return db.transaction(async (tx) => {
      const rows = await tx
        .select({ name: accounts.name, state: accounts.state })
        .from(accounts)
        .where(and(inArray(accounts.state, ['ACTIVATING', 'DEACTIVATING']), lt(accounts.updatedAt, cutoff)))
        .orderBy(accounts.name)
        .for('update', { skipLocked: true });
      if (rows.length === 0) return [];
      const reasonOf = (state: string) =>
        state === 'ACTIVATING'
          ? `no agent started serving it within ${deps.timeoutSeconds}s`
          : `its agent did not stop serving it within ${deps.timeoutSeconds}s`;
      for (const state of ['ACTIVATING', 'DEACTIVATING']) {
        const names = rows.filter((r) => r.state === state).map((r) => r.name);
        if (names.length === 0) continue;
        await tx
          .update(accounts)
          .set({ state: 'FAILED', reason: reasonOf(state), updatedAt: sql`now()` })
          .where(inArray(accounts.name, names));
      }
      await recordTransitions(
        tx,
        rows.map((r) => ({ account: r.name, from: r.state, to: 'FAILED' as const, reason: reasonOf(r.state), actor: GATEWAY_ACTOR })),
      );
      deps.logger.warn({ accounts: rows.map((r) => r.name) }, 'account changes timed out; accounts FAILED');
      return rows.map((r) => r.name);
    });
  };

  return {
    sweep,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        if (running) return;
        running = sweep()
          .catch((err: unknown) => deps.logger.error({ err }, 'account sweep failed'))
          .finally(() => (running = undefined));
      }, deps.intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
