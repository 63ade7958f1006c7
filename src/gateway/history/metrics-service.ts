/**
 * `outpost.api.v1.MetricsService`: the history behind the dashboard's charts, read from the samples the writer
 * stores (history-writer.ts) — so every replica answers the same, whichever one wrote them. The authorization table
 * requires the read role, as for FleetService.
 */
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import type { Database } from '../../db/database.js';
import { HistoryRange, type MetricsService } from '../../gen/outpost/api/v1/metrics_service_pb.js';
import type { Logger } from '../../shared/logger.js';
import { readAccountRow, readStateChangesSince } from '../accounts/account-reads.js';
import { accountHistory, fleetHistory } from './history-series.js';
import type { HistorySteps } from './history-sampler.js';
import { newestFleetSampleAt, readSamples } from './history-store.js';

/** The window of each range. */
const WINDOW_MS: Record<HistoryRange.HOUR | HistoryRange.DAY, number> = {
  [HistoryRange.HOUR]: 3600_000,
  [HistoryRange.DAY]: 24 * 3600_000,
};

/** Options of {@link createMetricsService}. */
export interface MetricsServiceOptions {
  database: Database;
  steps: HistorySteps;
  logger: Logger;
  /** Clock, for tests. */
  now?: () => number;
}

/** Creates the MetricsService implementation. */
export function createMetricsService(options: MetricsServiceOptions): ServiceImpl<typeof MetricsService> {
  const { steps } = options;
  const { db } = options.database;
  const now = options.now ?? Date.now;
  return {
    async getHistory(req) {
      const range = req.range === HistoryRange.UNSPECIFIED ? HistoryRange.HOUR : req.range;
      if (range !== HistoryRange.HOUR && range !== HistoryRange.DAY) {
        throw new ConnectError(`unknown range ${req.range}: use HISTORY_RANGE_HOUR or HISTORY_RANGE_DAY`, Code.InvalidArgument);
      }
      const t = now();
      const since = new Date(t - WINDOW_MS[range]);
      try {
        const newest = await newestFleetSampleAt(db, steps.stepSeconds);
        const recording = newest !== undefined && t - newest.getTime() <= 3 * steps.stepSeconds * 1000 + 2000;
        if (!req.account) {
          const step = range === HistoryRange.HOUR ? steps.stepSeconds : steps.dayStepSeconds;
          return fleetHistory(await readSamples(db, step, '', since), step, recording);
        }
        const [row] = await readAccountRow(db, req.account);
        if (!row) throw new ConnectError(`account "${req.account}" does not exist`, Code.NotFound);
        const step = range === HistoryRange.HOUR ? steps.accountStepSeconds : steps.dayStepSeconds;
        // The time axis: the fleet's rows at the account's step (at every multiple of it a writer sampled).
        const axisRows = await readSamples(db, range === HistoryRange.HOUR ? steps.stepSeconds : step, '', since);
        const axis = axisRows.filter((r) => (r.at.getTime() / 1000) % step === 0);
        const [own, changes] = await Promise.all([
          readSamples(db, step, req.account, since),
          readStateChangesSince(db, req.account, since),
        ]);
        return accountHistory(axis, own, { ...changes, current: row.state }, step, recording);
      } catch (err) {
        if (err instanceof ConnectError) throw err;
        options.logger.warn({ err }, 'history unavailable');
        throw new ConnectError('the history cannot be read now (database unreachable?); try again', Code.Unavailable);
      }
    },
  };
}
