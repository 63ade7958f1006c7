/**
 * The audit log (docs/security.md, "Audit log"): `record` writes a JSON log line at once and queues the entry; a
 * background writer inserts what queued in one statement per batch ("natural" batching as in
 * operations/write-batcher.ts: a lone entry waits for nothing, entries recorded while a batch is written go out
 * together). The queue is bounded: while the database is slow or down at most `maxPending` entries wait (the writer
 * retries with a growing pause); beyond that new entries are dropped, counted in
 * `outpost_gateway_audit_entries_dropped_total` and logged — the caller is never blocked and never sees an error.
 */
import type { Database } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import type { AuditRecorder } from '../metrics/gateway-metrics.js';
import { type AuditEntry, type AuditFilter, type StoredAuditEntry, sanitizeEntry } from './audit-entry.js';
import { listAuditEntries } from './audit-list.js';
import { type AuditStore, createAuditStore, type StoredEntryFields } from './audit-store.js';

export type { StoredAuditEntry } from './audit-entry.js';

/** See the module comment. */
export interface AuditLog {
  /** Records asynchronously (batched writes); never throws, never blocks the caller; a JSON log line per entry at once. */
  record(entry: AuditEntry): void;
  /** Reads newest first, filtered; for the RPC. Rejects with INVALID_ARGUMENT for a bad filter or page token. */
  list(filter: AuditFilter): Promise<{ entries: StoredAuditEntry[]; nextPageToken: string }>;
  /** Flushes pending writes (graceful shutdown; at most `closeTimeoutMs`). Entries recorded afterwards are dropped. */
  close(): Promise<void>;
}

/** What {@link createAuditLog} needs. */
export interface AuditLogDeps {
  database: Database;
  /** This replica's id, for entries recorded without one. */
  gatewayId: string;
  /** The gateway's logger; the audit log logs through a child `component: 'audit'`. */
  logger: Logger;
  metrics?: AuditRecorder;
  /** Entries queued or being written at most; default 10 000. */
  maxPending?: number;
  /** Entries per insert statement at most; default 500. */
  maxBatch?: number;
  /** First pause before a failed batch is retried (doubling up to 30 s); default 1000 ms. */
  retryMs?: number;
  /** How long `close()` tries to write what is pending; default 5000 ms. */
  closeTimeoutMs?: number;
  /** Overrides the database access (tests). */
  store?: AuditStore;
}

const MAX_RETRY_MS = 30_000;
const DROP_LOG_EVERY_MS = 10_000;

/** Creates the audit log; the caller must `close()` it before closing the database. */
export function createAuditLog(deps: AuditLogDeps): AuditLog {
  const log = deps.logger.child({ component: 'audit' });
  const store = deps.store ?? createAuditStore(deps.database);
  const maxPending = deps.maxPending ?? 10_000;
  const maxBatch = deps.maxBatch ?? 500;
  const retryMs = deps.retryMs ?? 1000;
  let pending: StoredEntryFields[] = [];
  let inFlight = 0;
  let writing: Promise<void> | undefined;
  let scheduled = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let failures = 0;
  let closed = false;
  let droppedSinceLog = 0;
  let lastDropLog = 0;

  const drop = (count: number, why: string) => {
    deps.metrics?.auditDropped(count);
    droppedSinceLog += count;
    const now = Date.now();
    if (now - lastDropLog < DROP_LOG_EVERY_MS) return;
    lastDropLog = now;
    log.error({ dropped: droppedSinceLog, pending: pending.length + inFlight }, `audit entries dropped: ${why}`);
    droppedSinceLog = 0;
  };

  const writeBatches = async (): Promise<boolean> => {
    while (pending.length > 0) {
      const batch = pending.splice(0, maxBatch);
      inFlight = batch.length;
      try {
        await store.insertMany(batch);
        if (failures > 0) log.info({ failures }, 'audit writes resumed');
        failures = 0;
      } catch (err) {
        pending = batch.concat(pending);
        failures++;
        if (failures === 1) log.error({ err, pending: pending.length }, 'audit entries could not be written; retrying');
        return false;
      } finally {
        inFlight = 0;
      }
    }
    return true;
  };

  const start = () => {
    scheduled = false;
    if (writing || retryTimer || closed) return;
    writing = writeBatches()
      .then((done) => {
        if (!done && !closed) {
          const pause = Math.min(MAX_RETRY_MS, retryMs * 2 ** Math.min(failures - 1, 16));
          retryTimer = setTimeout(() => {
            retryTimer = undefined;
            start();
          }, pause);
          retryTimer.unref();
        }
      })
      .finally(() => {
        writing = undefined;
        if (pending.length > 0 && !retryTimer && !closed) schedule();
      });
  };

  const schedule = () => {
    if (scheduled || writing || retryTimer || closed) return;
    scheduled = true;
    setImmediate(start);
  };

  return {
    record(entry) {
      try {
        const clean = sanitizeEntry(entry, deps.gatewayId);
        log.info({ audit: { ...clean, startedAt: clean.startedAt.toISOString() } }, 'audit');
        if (closed) return drop(1, 'the audit log is closed');
        if (pending.length + inFlight >= maxPending) return drop(1, `${maxPending} entries are already waiting for the database`);
        pending.push(clean);
        schedule();
      } catch (err) {
        // Never the caller's problem (a logger that throws, say).
        try {
          log.error({ err }, 'could not record an audit entry');
        } catch {}
      }
    },
    list: (filter) => listAuditEntries(store, filter),
    async close() {
      if (closed) return;
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = undefined;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, deps.closeTimeoutMs ?? 5000);
        timer.unref();
      });
      const flush = async () => {
        await writing;
        await writeBatches();
      };
      await Promise.race([flush(), timeout]);
      clearTimeout(timer);
      const left = pending.length + inFlight;
      pending = [];
      if (left > 0) {
        lastDropLog = 0;
        drop(left, 'the database could not take them before shutdown');
      }
    },
  };
}
