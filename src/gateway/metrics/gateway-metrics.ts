/**
 * The gateway's Prometheus metrics (prom-client), served at `GET /metrics` on the HTTP port. One registry per
 * gateway instance (never prom-client's global one), so several gateways in one process — tests — do not collide.
 * Features record into it through the narrow recorder interfaces below; gauges that describe current state (agents,
 * accounts, replicas) are computed at scrape time from their owners, so they can never drift.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { createKindLabels } from './kind-label.js';

/** What the write pipeline records per committed batch. */
export interface IngestRecorder {
  /** A batch of `events` (by kind) committed; `arrivedAt` and `writeStartedAt` are `performance.now()` stamps. */
  batchCommitted(eventsByKind: ReadonlyMap<string, number>, arrivedAt: number, writeStartedAt: number, committedAt: number): void;
}

/** What the operations feature records. */
export interface OperationRecorder {
  /** An operation reached a terminal state; `seconds` from receipt to the end. */
  finished(type: string, state: string, seconds: number): void;
  /** A forward to another replica was tried: `taken` when that replica took it. */
  forwarded(taken: boolean): void;
  /** An agent's operation result was not recorded, and why. */
  resultIgnored(reason: IgnoredResultReason): void;
  /** An agent's result broke the result rules of its operation type (recorded FAILED, InvalidResult). */
  resultInvalid(type: string): void;
}

/**
 * Why an operation result was ignored: no id; no stored operation has it; the reporting session does not serve the
 * operation's account; it came on a session the operation was not sent on (nor one that resumed it); the operation
 * had already ended (a duplicate or late answer).
 */
export type IgnoredResultReason = 'no_id' | 'unknown_operation' | 'account_not_served' | 'wrong_session' | 'already_finished';
/** What admission records about claims it refused. */
export interface ClaimRecorder {
  /** A claim of a name bound to another agent identity (`identity`) or another cluster (`cluster`) was refused. */
  claimRefused(reason: 'identity' | 'cluster'): void;
}

/** What the audit log records about entries it could not keep. */
export interface AuditRecorder {
  /** `count` audit entries were dropped: the pending queue was full (database slow or down) or the log had closed. */
  auditDropped(count: number): void;
}

/** How a `/k8s/` request was served. */
export type KubeVia = 'local' | 'forwarded' | 'unserved' | 'refused';

/** What kubectl through the gateway records (src/gateway/kube/kube-endpoint.ts). */
export interface KubeRecorder {
  /** A `/k8s/` request was admitted and is open. */
  kubeOpened(): void;
  /**
   * A `/k8s/` request ended with the status answered (0: the caller left first): `local` (an agent stream here),
   * `forwarded` (passed to another replica), `unserved` (admitted, but no agent stream serves the account), `refused`
   * (refused by the gateway at admission; never opened).
   */
  kubeFinished(via: KubeVia, status: number): void;
}

/**
 * Where a read of a cluster (get, list, logs, history: never stored) ran: `local` (an agent stream here),
 * `forwarded` (the replica holding a stream ran it), `unserved` (no agent serves the account now).
 */
export type ReadVia = 'local' | 'forwarded' | 'unserved';

/** What the reads of clusters record. */
export interface ReadRecorder {
  /** A read ended (SUCCEEDED, FAILED or TIMED_OUT); `seconds` from receipt to its end. */
  readFinished(type: string, via: ReadVia, state: string, seconds: number): void;
}

/** How a lookup of a Spinnaker user's Fiat permissions went: from the cache, fetched from Fiat, or Fiat failed. */
type FiatLookupResult = 'hit' | 'miss' | 'failure';

/** What the Fiat permission cache records (src/gateway/spinnaker/fiat/fiat-permissions.ts). */
export interface FiatRecorder {
  fiatLookup(result: FiatLookupResult): void;
}

/** What the write coalescer records (src/gateway/cache/write-coalescer.ts). */
export interface CoalesceRecorder {
  /** A group statement committed (`batches` of distinct streams, `rows` in all) or failed (`failed`). */
  groupWritten(batches: number, rows: number, failed: boolean): void;
}

/** What the Spinnaker answer cache records (src/gateway/spinnaker/infrastructure/answer-cache.ts). */
export interface AnswerCacheRecorder {
  answerCacheLookup(result: 'hit' | 'miss'): void;
}

/** The metrics of one gateway. */
export interface GatewayMetrics
  extends IngestRecorder,
    OperationRecorder,
    ClaimRecorder,
    AuditRecorder,
    KubeRecorder,
    ReadRecorder,
    FiatRecorder,
    AnswerCacheRecorder,
    CoalesceRecorder {
  readonly registry: Registry;
  /** The text exposition format. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

/** A count per state, as the database gauges read it. */
interface StateCount {
  state: string;
  n: number;
}

/**
 * Sources of the scrape-time gauges. The database reads are handed in by the composition (modules/gateway-core.ts)
 * from the tables' owners (accounts/, cache/): metrics sit below them and never import them. Each may reject (an
 * unreachable database); the gauge is then left empty for that scrape.
 */
export interface GatewayMetricsSources {
  /** Accounts by state (accounts/account-reads.ts). */
  accountsByState(): Promise<StateCount[]>;
  /** Watch scopes by sync state, `listing` or `synced` (cache/watch-state-reads.ts). */
  syncScopesByState(): Promise<StateCount[]>;
  /** Objects listed so far by the lists still running (cache/watch-state-reads.ts). */
  objectsListedWhileListing(): Promise<number>;
  /** Live agent streams on this replica. */
  connectedAgents(): number;
  /** Replicas discovery knows (this one included when listed). */
  replicasKnown(): number;
}

/** Creates the registry and every metric. */
export function createGatewayMetrics(sources: GatewayMetricsSources): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'outpost_gateway_' });
  new Gauge({
    name: 'outpost_gateway_connected_agents',
    help: 'Agent streams connected to this replica.',
    registers: [registry],
    collect() {
      this.set(sources.connectedAgents());
    },
  });
  new Gauge({
    name: 'outpost_gateway_replicas_known',
    help: 'Gateway replicas this replica knows of (discovery).',
    registers: [registry],
    collect() {
      this.set(sources.replicasKnown());
    },
  });
  new Gauge({
    name: 'outpost_gateway_accounts',
    help: 'Accounts by state (shared database: the same on every replica).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const row of await sources.accountsByState()) this.set({ state: row.state }, row.n);
      } catch {
        // An unreachable database leaves the gauge empty for this scrape; /health reports the outage.
      }
    },
  });
  new Gauge({
    name: 'outpost_gateway_sync_scopes',
    help: 'Watch scopes (account, kind, namespace) by sync state: listing (initial or re-list running) or synced.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const row of await sources.syncScopesByState()) this.set({ state: row.state }, row.n);
      } catch {
        // see outpost_gateway_accounts
      }
    },
  });
  new Gauge({
    name: 'outpost_gateway_sync_objects_listed',
    help: 'Objects listed so far by the full lists still running (progress of initial syncs).',
    registers: [registry],
    async collect() {
      try {
        this.set(await sources.objectsListedWhileListing());
      } catch {
        // see outpost_gateway_accounts
      }
    },
  });
  const events = new Counter({
    name: 'outpost_gateway_events_ingested_total',
    help: 'Events stored in the cache, by kind (the first 500 kinds seen; others, and strings that are no kind, as "other").',
    labelNames: ['kind'],
    registers: [registry],
  });
  const kindLabel = createKindLabels();
  const batches = new Counter({ name: 'outpost_gateway_event_batches_total', help: 'Event batches committed.', registers: [registry] });
  const lag = new Histogram({
    name: 'outpost_gateway_ingest_lag_seconds',
    help: 'From an event batch arriving on an agent stream to its commit (queueing behind the previous batch included).',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const write = new Histogram({
    name: 'outpost_gateway_db_batch_seconds',
    help: 'Time of one event batch write, from handing it to the writer to its commit (its wait for a coalesced group included).',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  });
  const operations = new Counter({
    name: 'outpost_gateway_operations_total',
    help: 'Operations that reached a terminal state on this replica, by type and state.',
    labelNames: ['type', 'state'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'outpost_gateway_operation_seconds',
    help: 'Operation latency from receipt to its terminal state, by type.',
    labelNames: ['type'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const reads = new Counter({
    name: 'outpost_gateway_reads_total',
    help: 'Reads of a cluster (get, list, logs, history: never stored) that ended on this replica, by type, where they ran and state.',
    labelNames: ['type', 'via', 'state'],
    registers: [registry],
  });
  const readLatency = new Histogram({
    name: 'outpost_gateway_read_seconds',
    help: 'Latency of reads of a cluster from receipt to their end, by type and where they ran.',
    labelNames: ['type', 'via'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const forwarded = new Counter({
    name: 'outpost_gateway_forwarded_operations_total',
    help: 'Operations forwarded to the replica holding the stream, by whether it took them.',
    labelNames: ['result'],
    registers: [registry],
  });
  const ignoredResults = new Counter({
    name: 'outpost_gateway_operation_results_ignored_total',
    help: 'Operation results not recorded, by reason (wrong_session: not from the stream session the operation was sent on).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const invalidResults = new Counter({
    name: 'outpost_gateway_operation_results_invalid_total',
    help: 'Operation results that broke the result rules of their operation type (recorded FAILED with reason InvalidResult), by type.',
    labelNames: ['type'],
    registers: [registry],
  });
  const claimsRefused = new Counter({
    name: 'outpost_gateway_account_claims_refused_total',
    help: 'Account claims refused because the name is bound to another agent identity or another cluster, by reason.',
    labelNames: ['reason'],
    registers: [registry],
  });
  const auditDropped = new Counter({
    name: 'outpost_gateway_audit_entries_dropped_total',
    help: 'Audit entries not stored (their JSON log line was written): the pending queue was full while the database was slow or down.',
    registers: [registry],
  });
  const kubeRequests = new Counter({
    name: 'outpost_gateway_kube_requests_total',
    help: 'Requests to /k8s/{account} (kubectl through the gateway), by how they were served and the HTTP status answered.',
    labelNames: ['via', 'code'],
    registers: [registry],
  });
  const kubeOpen = new Gauge({
    name: 'outpost_gateway_kube_requests_open',
    help: 'Requests to /k8s/{account} open now on this replica (watches, logs -f and exec sessions count while they last).',
    registers: [registry],
  });
  const fiatLookups = new Counter({
    name: 'outpost_gateway_fiat_lookups_total',
    help: "Lookups of a Spinnaker user's Fiat permissions, by result: hit (cached), miss (asked Fiat), failure (Fiat could not answer: refused).",
    labelNames: ['result'],
    registers: [registry],
  });
  const writeGroups = new Counter({
    name: 'outpost_gateway_cache_write_groups_total',
    help: "Group statements of the replica's cache writes (one commit each, several streams' batches), by result: committed or failed (its batches then written one by one).",
    labelNames: ['result'],
    registers: [registry],
  });
  const groupBatches = new Histogram({
    name: 'outpost_gateway_cache_write_group_batches',
    help: "Streams' event batches per group statement of the replica's cache writes.",
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
    registers: [registry],
  });
  const answerCacheLookups = new Counter({
    name: 'outpost_gateway_spinnaker_answer_cache_total',
    help: "Answers of Deck's application routes, by result: hit (kept answer served, its accounts unchanged), miss (built from the cache).",
    labelNames: ['result'],
    registers: [registry],
  });
  return {
    registry,
    fiatLookup(result) {
      fiatLookups.inc({ result });
    },
    answerCacheLookup(result) {
      answerCacheLookups.inc({ result });
    },
    groupWritten(batches, _rows, failed) {
      writeGroups.inc({ result: failed ? 'failed' : 'committed' });
      if (!failed) groupBatches.observe(batches);
    },
    kubeOpened() {
      kubeOpen.inc();
    },
    kubeFinished(via, status) {
      if (via !== 'refused') kubeOpen.dec();
      kubeRequests.inc({ via, code: String(status) });
    },
    auditDropped(count) {
      auditDropped.inc(count);
    },
    claimRefused(reason) {
      claimsRefused.inc({ reason });
    },
    batchCommitted(eventsByKind, arrivedAt, writeStartedAt, committedAt) {
      for (const [kind, n] of eventsByKind) events.inc({ kind: kindLabel(kind) }, n);
      batches.inc();
      lag.observe(Math.max(0, committedAt - arrivedAt) / 1000);
      write.observe(Math.max(0, committedAt - writeStartedAt) / 1000);
    },
    finished(type, state, seconds) {
      operations.inc({ type, state });
      latency.observe({ type }, Math.max(0, seconds));
    },
    readFinished(type, via, state, seconds) {
      reads.inc({ type, via, state });
      readLatency.observe({ type, via }, Math.max(0, seconds));
    },
    resultIgnored(reason) {
      ignoredResults.inc({ reason });
    },
    resultInvalid(type) {
      invalidResults.inc({ type });
    },
    forwarded(taken) {
      forwarded.inc({ result: taken ? 'taken' : 'refused' });
    },
    async scrape() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
