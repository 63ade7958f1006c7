/**
 * Deadlines of operations: a timer per operation this replica received (tracked from its insert on), a sweeper that
 * ends every open row past its deadline — also those of a replica that died — and the start-up recovery of this
 * replica's own rows left open by a restart. Each ends a row with the store's conditional update, so whichever writer
 * comes first records the outcome once (docs/architecture.md, rule 6).
 */
import { createPeriodicJob } from '../../shared/periodic-job.js';
import type { OperationContext, LocalOperation } from './operation-context.js';
import type { OperationRow } from './operation-store.js';

/** Error of this replica's operations that were open when it restarted and are past their deadline. */
const RESTART_ERROR = 'gateway restarted before the result arrived';

/** The deadline side of the manager. */
export interface OperationDeadlines {
  /**
   * Starts tracking a row this replica just inserted: registers it in `locals` with its deadline timer armed. Call
   * once per inserted row, before it is dispatched.
   */
  track(row: OperationRow): LocalOperation;
  /** Start-up: this replica's open operations past their deadline → TIMED_OUT (restart). Returns how many. */
  recover(): Promise<number>;
  /** Starts the sweeper; does nothing once the manager is closing or when it runs already. */
  start(): void;
  /** Stops the sweeper (the per-operation timers stop with the context's shutdown). */
  stop(): void;
}

/** Creates the deadline timers and sweeper over the shared context. */
export function createOperationDeadlines(ctx: OperationContext): OperationDeadlines {
  const { store, config, log, locals, settle, report, deps } = ctx;
  // Every row past its deadline, whichever replica received it (also those of a replica that died).
  const sweeper = createPeriodicJob({
    intervalMs: config.sweepIntervalMs,
    logger: log,
    errorMessage: 'operation sweep failed',
    run: async () => {
      for (const row of await store.expire(new Date(), { limit: 1000 })) {
        log.info({ operationId: row.id, account: row.account, error: row.error }, 'operation timed out (sweeper)');
        settle(row);
      }
    },
  });

  return {
    track(row) {
      const local: LocalOperation = {
        account: row.account,
        deadlineAt: row.deadlineAt.getTime(),
        row,
        waitUntil: row.receivedAt.getTime() + ctx.agentWaitMs,
        delivering: 0,
      };
      local.deadlineTimer = setTimeout(
        () => {
          const now = new Date(Math.max(Date.now(), local.deadlineAt));
          store.expire(now, { ids: [row.id] }).then((rows) => rows.forEach(settle), report('could not time out the operation', row.id));
        },
        Math.max(0, local.deadlineAt - Date.now()),
      );
      local.deadlineTimer.unref();
      locals.set(row.id, local);
      return local;
    },

    async recover() {
      let total = 0;
      for (;;) {
        const rows = await store.expire(new Date(), { gatewayId: deps.gatewayId, error: RESTART_ERROR, limit: 1000 });
        total += rows.length;
        if (rows.length < 1000) break;
      }
      if (total > 0) log.warn({ count: total }, 'operations left open by a restart timed out');
      return total;
    },

    start() {
      if (!ctx.closing.aborted) sweeper.start();
    },

    stop() {
      void sweeper.stop();
    },
  };
}
