/**
 * The background sealing of operation requests an older version stored in plaintext (operations/legacy-requests.ts),
 * as one object: the operations module starts it once the gateway serves (a scan of the operations table must not
 * delay serving), and the core's shutdown step stops it before the database closes.
 */
import type { Database } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import { sealLegacyRequests } from '../operations/legacy-requests.js';
import type { OperationSealer } from '../operations/operation-sealing.js';

/** The background scan. `start` at most once; `stop` whether or not it started. */
export interface LegacySealing {
  /** Starts the scan; a failure is logged (the next start retries). */
  start(): void;
  /** Aborts the scan and resolves once it ended. */
  stop(): Promise<unknown>;
}

/** Creates the (not yet started) scan. */
export function createLegacySealing(database: Database, sealer: OperationSealer, logger: Logger): LegacySealing {
  const abort = new AbortController();
  let running: Promise<unknown> = Promise.resolve();
  return {
    start() {
      running = sealLegacyRequests(database, sealer, logger, abort.signal).catch((err: unknown) =>
        logger.error({ err }, 'could not seal the operation requests stored in plaintext; retried at the next start'),
      );
    },
    stop() {
      abort.abort();
      return running;
    },
  };
}
