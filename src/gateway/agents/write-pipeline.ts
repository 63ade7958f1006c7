/**
 * The ordered data half of an agent stream: event batches and sync markers carry consecutive sequence numbers, are
 * stored strictly in order and acknowledged once committed. A batch is validated and decoded while the previous one
 * is still being written (at most one write in flight), so the stream reads message n+1 while message n commits.
 * Account reports (status and listing progress) are written here too. Only accounts the stream caches may send data
 * (data-access.ts): data of an account released while it was in flight is dropped (and still acknowledged), data of
 * any other account ends the stream with PERMISSION_DENIED.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { AccountInfo, EventBatch, SyncMarker } from '../../gen/outpost/agent/v1/agent_pb.js';
import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/database.js';
import { applyAccountReport } from '../accounts/account-claim-queries.js';
import { decodeEventBatch, type DecodedBatch } from '../cache/event-decoder.js';
import type { ObjectWriter } from '../cache/object-writer.js';
import type { SyncState } from '../cache/sync-state.js';
import { isLeaseLost, type WriteFence } from '../accounts/lease-fence.js';
import { invalidArgument } from '../http/errors.js';
import type { IngestRecorder } from '../metrics/gateway-metrics.js';
import { dataAccess } from './data-access.js';
import { validateAccountInfo } from './hello-validation.js';
import { createListTracker, type ListTracker } from './list-tracker.js';
import type { SessionRegistry } from './session-registry.js';
import type { StreamState } from './stream-state.js';

/** What the pipeline writes to. */
export interface WritePipelineDeps {
  /** Records committed batches (events by kind, ingest lag, write time); none when absent. */
  metrics?: IngestRecorder;
  registry: SessionRegistry;
  /** The database: account reports are written to the session's `accounts` rows (account-claim-queries.ts). */
  db: Db;
  objectWriter: ObjectWriter;
  syncState: SyncState;
}

/** Listing progress of one watch, as an account report carries it. */
interface ListingProgress {
  apiVersion: string;
  kind: string;
  namespace: string;
  listed: bigint;
}

/** The write pipeline of one stream. Call its methods from the stream's request loop only, one message at a time. */
export interface WritePipeline {
  /** True while a batch write is in flight (the stream is not idle then, whatever the agent sends). */
  readonly writing: boolean;
  /**
   * Checks the sequence, decodes the batch and queues its write behind the in-flight one, returning without waiting
   * for it (its ack follows the commit). Throws INVALID_ARGUMENT for a bad batch, after the previous write finished.
   */
  events(batch: EventBatch): Promise<void>;
  /** Applies a sync marker, then acknowledges it. The caller drains first: the marker follows the committed batches. */
  sync(marker: SyncMarker): Promise<void>;
  /** Writes an account report (status and listing progress); the caller drains first. */
  report(info: AccountInfo | undefined, progress: readonly ListingProgress[]): Promise<void>;
  /** Waits for the in-flight batch write; its failure was already reported through `fail`. */
  drain(): Promise<void>;
}

/**
 * Creates the pipeline of a stream. `fail` is called (once the stream is not waiting on it) when a batch write fails:
 * it must end the stream with the error.
 */
export function createWritePipeline(state: StreamState, deps: WritePipelineDeps, fail: (err: unknown) => void): WritePipeline {
  return new StreamWritePipeline(state, deps, fail);
}

/** A class rather than closures: one lives per agent stream, and a gateway holds thousands of them. */
class StreamWritePipeline implements WritePipeline {
  private readonly lists: ListTracker;
  /** Highest sequence accepted (checked and queued); acks follow once it is committed. */
  private lastSequence = 0n;
  /** The event batch being written while the next message is read and decoded (at most one). */
  private inflight: Promise<void> | undefined;

  constructor(
    private readonly state: StreamState,
    private readonly deps: WritePipelineDeps,
    private readonly fail: (err: unknown) => void,
  ) {
    this.lists = createListTracker(deps.syncState, () => state.log);
  }

  get writing(): boolean {
    return this.inflight !== undefined;
  }

  async drain(): Promise<void> {
    try {
      await this.inflight;
    } catch {
      // reported by fail
    }
  }

  async events(batch: EventBatch): Promise<void> {
    const { state, deps } = this;
    const arrivedAt = performance.now();
    let decoded: DecodedBatch;
    try {
      this.checkSequence(batch.sequence);
      decoded = decodeEventBatch(batch, {
        access: (account) => dataAccess(state, deps.registry, account),
        listGeneration: (account, apiVersion, kind, watchNamespace) => this.lists.generation({ account, apiVersion, kind, watchNamespace }),
      });
    } catch (err) {
      await this.drain();
      throw err;
    }
    for (const s of decoded.scrubbedSecrets) {
      state.log.warn(s, 'Secret arrived with data; dropped it before storing (the agent must scrub Secrets)');
    }
    if (decoded.droppedReleased > 0) {
      state.log.debug(
        { sequence: batch.sequence, dropped: decoded.droppedReleased },
        'dropped events of accounts this stream no longer caches (in flight when it was released)',
      );
    }
    await this.drain();
    if (state.stopped) return;
    const sequence = batch.sequence;
    const writeStartedAt = performance.now();
    const recorded = () => deps.metrics?.batchCommitted(countByKind(decoded), arrivedAt, writeStartedAt, performance.now());
    // Accounts whose lease is gone were not written (the others were): the stream stops caching them and the batch
    // is acknowledged — their data is the new holder's to bring.
    const write: Promise<void> = deps.objectWriter
      .write(decoded, this.fenceFor(decoded.accounts))
      .then(recorded, (err) => this.lostLease(err))
      .then(() => this.commit(sequence));
    this.inflight = write;
    write.then(
      () => {
        if (this.inflight === write) this.inflight = undefined;
      },
      (err) => this.fail(err),
    );
  }

  async sync(marker: SyncMarker): Promise<void> {
    this.checkSequence(marker.sequence);
    const access = dataAccess(this.state, this.deps.registry, marker.account);
    if (access === 'drop') {
      this.state.log.debug(
        { account: marker.account, sequence: marker.sequence },
        'dropped sync marker of an account this stream no longer caches',
      );
      this.commit(marker.sequence);
      return;
    }
    if (access !== 'write') throw new ConnectError(`sync marker ${marker.sequence}: ${access.refused}`, Code.PermissionDenied);
    await this.lists.apply(marker, this.fenceFor([marker.account])).catch((err) => this.lostLease(err));
    this.commit(marker.sequence);
  }

  async report(info: AccountInfo | undefined, progress: readonly ListingProgress[]): Promise<void> {
    if (!info) throw invalidArgument('account_report.account is required');
    validateAccountInfo(info, 'account_report');
    const access = dataAccess(this.state, this.deps.registry, info.name);
    if (access === 'drop') {
      this.state.log.debug({ account: info.name }, 'ignored report of an account this stream no longer caches');
      return;
    }
    if (access !== 'write') throw new ConnectError(`account_report: ${access.refused}`, Code.PermissionDenied);
    await applyAccountReport(this.deps.db, this.state.id, info);
    await this.deps.syncState
      .recordProgress(
        info.name,
        progress.map((p) => ({ apiVersion: p.apiVersion, kind: p.kind, watchNamespace: p.namespace, listed: Number(p.listed) })),
        this.fenceFor([info.name]),
      )
      .catch((err) => this.lostLease(err));
  }

  private checkSequence(sequence: bigint): void {
    const expected = this.lastSequence + 1n;
    if (sequence !== expected) throw invalidArgument(`sequence ${sequence} is out of order: expected ${expected}`);
    this.lastSequence = sequence;
  }

  private commit(sequence: bigint): void {
    this.state.outbox.ack(sequence);
  }

  /** A LeaseLostError demotes its accounts on this stream (not waited for: it runs between messages); others rethrow. */
  private lostLease(err: unknown): void {
    if (!isLeaseLost(err)) throw err;
    void this.state.leaseLost(err.accounts);
  }

  /** The leases this stream presents for writes of `accounts` (epoch 0 — never valid — when it holds none). */
  private fenceFor(accounts: readonly string[]): WriteFence {
    return {
      sessionId: this.state.id,
      leases: accounts.map((name) => {
        const lease = this.deps.registry.leaseOf(name);
        return { name, epoch: lease?.session === this.state ? lease.epoch : 0 };
      }),
    };
  }
}

/** Events of a decoded batch by kind (upserts and deletes). */
function countByKind(batch: DecodedBatch): Map<string, number> {
  const counts = new Map<string, number>();
  for (const row of batch.upserts) counts.set(row.kind, (counts.get(row.kind) ?? 0) + 1);
  for (const row of batch.deletes) counts.set(row.kind, (counts.get(row.kind) ?? 0) + 1);
  return counts;
}
