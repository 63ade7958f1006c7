/**
 * The agent's Prometheus metrics (prom-client), served at `GET /metrics` on `prometheus.port`. One registry per agent
 * (never prom-client's global one), so several agents in one process — tests — do not collide; it is created by
 * `startAgent` and handed explicitly to the parts that record into it, through the narrow recorder interfaces below.
 * Gauges that describe current state (connected, open watches, unacknowledged batches) are read from their owners at
 * scrape time, so they can never drift.
 *
 * Metrics (prefix `outpost_agent_`): `connected`, `disconnections_total`, `events_sent_total{kind}`,
 * `bytes_sent_total`, `kubernetes_requests_total{verb,code}`, `watches_open`, `unacked_batches`, and prom-client's
 * default process metrics (`outpost_agent_process_*`, `outpost_agent_nodejs_*`).
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { ConnectRequestSchema, EventType, type ConnectRequest } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { KubeRequestRecorder } from '../kube/kube-client.js';
import { wireSize } from '../stream/wire-size.js';

/** What the gateway stream records. */
export interface StreamRecorder {
  /** A data message (EventBatch or SyncMarker) was written to the gateway stream. */
  dataSent(message: ConnectRequest): void;
  /** A session that had been welcomed ended (the stream failed or the gateway ended it; not the agent's own close). */
  disconnected(): void;
}

/** Where the scrape-time gauges read from. */
export interface AgentMetricsSources {
  /** Whether a session is welcomed right now. */
  connected(): boolean;
  /** Watch scopes currently in the `watching` state, over every account. */
  watchesOpen(): number;
  /** Data messages sent on the current stream and not acknowledged yet (0 without a stream). */
  unackedBatches(): number;
}

/** The metrics of one agent. */
export interface AgentMetrics extends StreamRecorder, KubeRequestRecorder {
  readonly registry: Registry;
  /** The text exposition format. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

const PREFIX = 'outpost_agent_';

/** Creates the registry and every metric. */
export function createAgentMetrics(sources: AgentMetricsSources): AgentMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
  new Gauge({
    name: `${PREFIX}connected`,
    help: '1 while the agent holds a welcomed stream to the gateway, else 0.',
    registers: [registry],
    collect() {
      this.set(sources.connected() ? 1 : 0);
    },
  });
  new Gauge({
    name: `${PREFIX}watches_open`,
    help: 'Watch scopes (kind, or kind in one namespace, of one account) currently watching.',
    registers: [registry],
    collect() {
      this.set(sources.watchesOpen());
    },
  });
  new Gauge({
    name: `${PREFIX}unacked_batches`,
    help: 'Data messages (event batches and sync markers) sent and not yet acknowledged by the gateway (the outbox window).',
    registers: [registry],
    collect() {
      this.set(sources.unackedBatches());
    },
  });
  const disconnections = new Counter({
    name: `${PREFIX}disconnections_total`,
    help: 'Welcomed gateway streams that ended (failed, dropped, or ended by the gateway).',
    registers: [registry],
  });
  const events = new Counter({
    name: `${PREFIX}events_sent_total`,
    help: 'Changes (added, modified, deleted objects) written to the gateway stream, by Kubernetes kind; bookmarks are not changes and are not counted.',
    labelNames: ['kind'],
    registers: [registry],
  });
  const bytes = new Counter({
    name: `${PREFIX}bytes_sent_total`,
    help: 'Serialized protobuf bytes of the data messages (event batches, sync markers) written to the gateway stream.',
    registers: [registry],
  });
  const kubeRequests = new Counter({
    name: `${PREFIX}kubernetes_requests_total`,
    help: 'Kubernetes API calls by verb (list, watch, get, create, update, patch, apply, delete…) and HTTP status ("error" when no answer came).',
    labelNames: ['verb', 'code'],
    registers: [registry],
  });

  return {
    registry,
    dataSent(message) {
      bytes.inc(wireSize(ConnectRequestSchema, message));
      if (message.message.case !== 'events') return;
      // Batches are mostly one kind: count runs instead of building a map per batch.
      let kind: string | undefined;
      let run = 0;
      for (const event of message.message.value.events) {
        if (event.type === EventType.BOOKMARK) continue;
        if (event.kind === kind) {
          run++;
          continue;
        }
        if (kind !== undefined) events.inc({ kind }, run);
        kind = event.kind;
        run = 1;
      }
      if (kind !== undefined) events.inc({ kind }, run);
    },
    disconnected() {
      disconnections.inc();
    },
    kubeRequest(verb, code) {
      kubeRequests.inc({ verb, code });
    },
    async scrape() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
