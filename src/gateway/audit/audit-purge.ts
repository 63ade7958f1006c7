/**
 * Retention of the audit log: every `intervalMs` each replica deletes the entries started more than `retentionDays`
 * ago, `batchSize` rows per statement until none is left (short statements: writers and readers are never held up by
 * one long delete). Concurrent purges on several replicas are harmless — a row is deleted once.
 */
import type { Logger } from '../../shared/logger.js';
import { createPeriodicJob, type JobTimers } from '../../shared/periodic-job.js';
import type { AuditStore } from './audit-store.js';

/** A purge job; nothing runs before `start()`. */
export interface AuditPurge {
  /** One purge now; resolves with how many entries it deleted. */
  purge(): Promise<number>;
  start(): void;
  /** Stops the timer; resolves once a purge in flight has finished. */
  stop(): Promise<void>;
}

/** What {@link createAuditPurge} needs. */
export interface AuditPurgeDeps {
  store: Pick<AuditStore, 'deleteOlderThan'>;
  retentionDays: number;
  batchSize: number;
  intervalMs: number;
  logger: Logger;
  /** The clock; tests inject one. Default: `new Date()`. */
  now?: () => Date;
  timers?: JobTimers;
}

const DAY_MS = 86_400_000;

/** Creates the job; the caller must `stop()` it before closing the database. */
export function createAuditPurge(deps: AuditPurgeDeps): AuditPurge {
  const now = deps.now ?? (() => new Date());
  const purge = async (): Promise<number> => {
    const cutoff = new Date(now().getTime() - deps.retentionDays * DAY_MS);
    let total = 0;
    for (;;) {
      const deleted = await deps.store.deleteOlderThan(cutoff, deps.batchSize);
      total += deleted;
      if (deleted < deps.batchSize) break;
    }
    if (total > 0) deps.logger.info({ deleted: total, before: cutoff.toISOString() }, 'audit entries past their retention deleted');
    return total;
  };
  const job = createPeriodicJob({
    run: purge,
    intervalMs: deps.intervalMs,
    logger: deps.logger,
    errorMessage: 'audit purge failed',
    timers: deps.timers,
  });
  return { purge, start: () => job.start(), stop: () => job.stop() };
}
