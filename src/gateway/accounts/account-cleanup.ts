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
 * age, no live session) under the row lock, so concurrent sweepers remove it once and an account re-activated in the
 * meantime is left alone; its objects and watch state are removed in the same transaction.
 */
import { and, eq, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { accounts, objects, watchStates } from '../../db/schema.js';
import type { Logger } from '../../shared/logger.js';
import { GATEWAY_ACTOR, recordTransitions } from './account-states.js';

/** One account removed by a pass. */
export interface CleanedAccount {
  name: string;
  /** How long it had been without an agent, in seconds. */
  withoutAgentSeconds: number;
}

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
}

/** Creates the sweeper; call `start()` to run it every `intervalMs`. */
export function createAccountCleanup(options: AccountCleanupOptions): AccountCleanup {
  const { db } = options.database;
  const { graceSeconds, logger } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  /** Everything that makes an account removable; evaluated again by the DELETE itself. */
  const removable = () => {
    const cutoff = sql`now() - make_interval(secs => ${graceSeconds})`;
    return and(
      eq(accounts.source, 'agent'),
      eq(accounts.state, 'INACTIVE'),
      eq(accounts.desiredState, 'ACTIVE'),
      lt(accounts.updatedAt, cutoff),
      sql`not exists (select 1 from agent_sessions s where s.ended_at is null and s.last_seen_at > ${cutoff}
            and (s.caching @> jsonb_build_array(${accounts.name}) or s.standby @> jsonb_build_array(${accounts.name})))`,
    );
  };

  const removeOne = async (name: string): Promise<CleanedAccount | undefined> =>
    db.transaction(async (tx) => {
      const [row] = await tx
        .delete(accounts)
        .where(and(eq(accounts.name, name), removable()))
        .returning({ name: accounts.name, idle: sql<string>`extract(epoch from now() - ${accounts.updatedAt})` });
      if (!row) return undefined;
      await tx.delete(objects).where(eq(objects.account, name));
      await tx.delete(watchStates).where(eq(watchStates.account, name));
      const withoutAgentSeconds = Math.round(Number(row.idle));
      const reason = `no agent for ${withoutAgentSeconds}s (grace ${graceSeconds}s): cache, watch state and name binding removed`;
      await recordTransitions(tx, [{ account: name, from: 'INACTIVE', to: 'DELETING', reason, actor: GATEWAY_ACTOR }]);
      return { name, withoutAgentSeconds };
    });

  const sweep = async (): Promise<CleanedAccount[]> => {
    const candidates = await db.select({ name: accounts.name }).from(accounts).where(removable()).orderBy(accounts.name);
    const cleaned: CleanedAccount[] = [];
    for (const { name } of candidates) {
      const done = await removeOne(name);
      if (!done) continue;
      cleaned.push(done);
      logger.info(
        { account: name, withoutAgentSeconds: done.withoutAgentSeconds, graceSeconds },
        `account ${name} had no agent for ${done.withoutAgentSeconds}s; its cache was cleaned up and the account removed`,
      );
    }
    return cleaned;
  };

  return {
    sweep,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        if (running) return;
        running = sweep()
          .catch((err: unknown) => logger.error({ err }, 'account cleanup failed'))
          .finally(() => (running = undefined));
      }, options.intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
