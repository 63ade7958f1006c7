/**
 * The outbox numbers and sends data messages (EventBatch, SyncMarker) on one stream, and enforces the window of
 * unacknowledged messages. Events are grouped into batches by "group commit": when nothing is in flight, what was
 * pushed leaves at once (on the next turn of the event loop, so the events of one read travel together); while data
 * is in flight, events gather until the gateway acknowledges it (or a size limit, or `batchFlushMs` as an upper
 * bound). A quiet stream thus pays no batching delay and a busy one still sends large batches (docs/architecture.md,
 * "Batching"). When the window is full nothing more is sent and {@link Outbox.ready} stays pending: watchers await it
 * before reading more, so the backlog stays in the API server (resume by resourceVersion), never in agent memory.
 */
import { create } from '@bufbuild/protobuf';
import {
  ConnectRequestSchema,
  EventBatchSchema,
  EventSchema,
  SyncMarkerSchema,
  type ConnectRequest,
  type Event,
} from '../../gen/outpost/agent/v1/agent_pb.js';

/** Raised to waiters when the stream the outbox belongs to is gone. */
export class OutboxClosedError extends Error {
  constructor() {
    super('stream closed');
    this.name = 'OutboxClosedError';
  }
}

/** Options of {@link createOutbox}. */
export interface OutboxOptions {
  /** Writes one message on the stream. */
  send: (message: ConnectRequest) => void;
  /** Largest number of unacknowledged data messages (from the Welcome). */
  maxUnacked: number;
  batchMaxEvents: number;
  /** Flush a batch when its objects reach this many bytes (keeps messages under the gateway's size limit). */
  batchMaxBytes: number;
  /** Longest wait of a batch while earlier data is in flight (with nothing in flight a batch leaves at once). */
  batchFlushMs: number;
}

/** Event fields, as for `create(EventSchema, …)`. */
type EventInit = Parameters<typeof create<typeof EventSchema>>[1];
/** Marker fields without the sequence (the outbox assigns it). */
type MarkerInit = Omit<NonNullable<Parameters<typeof create<typeof SyncMarkerSchema>>[1]>, 'sequence' | '$typeName'>;

/** See the module comment. One outbox per stream; discard it (close) when the stream ends. */
export interface Outbox {
  /** Queues an event into the current batch. Callers must respect {@link ready} before reading more input. */
  pushEvent(event: EventInit): void;
  /** Queues a sync marker after everything queued so far. */
  pushMarker(marker: MarkerInit): void;
  /** Resolves when the window has room and nothing is waiting; rejects with OutboxClosedError after close. */
  ready(): Promise<void>;
  /** Whether {@link ready} would resolve immediately. */
  isReady(): boolean;
  /** Releases the window up to and including `sequence`. */
  ack(sequence: bigint): void;
  /**
   * Drops the events and markers of `account` that are queued but not sent yet (the account was removed: nothing of
   * it may follow the announcement). Data already sent stays in the window until acknowledged.
   */
  discardAccount(account: string): void;
  /** Drops everything queued, rejects waiters. */
  close(): void;
  /** Data messages sent and not acknowledged. */
  readonly inFlight: number;
  /** Highest sequence sent so far (0 before the first). */
  readonly lastSent: bigint;
}

type Queued = { kind: 'batch'; events: Event[] } | { kind: 'marker'; marker: MarkerInit };

/** Creates the outbox of one stream; sequences start at 1. */
export function createOutbox(options: OutboxOptions): Outbox {
  let lastSent = 0n;
  let lastAcked = 0n;
  let closed = false;
  const queue: Queued[] = [];
  let pending: Event[] = [];
  let pendingBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  let flushDue = false;
  /** A flush on the next turn of the event loop is scheduled (nothing was in flight when the batch began). */
  let immediate: NodeJS.Immediate | undefined;
  let waiters: { resolve: () => void; reject: (err: Error) => void }[] = [];

  const inFlight = () => Number(lastSent - lastAcked);
  const windowOpen = () => inFlight() < options.maxUnacked;
  const isReady = () =>
    !closed && windowOpen() && queue.length === 0 && pending.length < options.batchMaxEvents && pendingBytes < options.batchMaxBytes;

  function sendQueued(item: Queued): void {
    lastSent += 1n;
    const message =
      item.kind === 'batch'
        ? create(ConnectRequestSchema, {
            message: { case: 'events', value: create(EventBatchSchema, { sequence: lastSent, events: item.events }) },
          })
        : create(ConnectRequestSchema, {
            message: { case: 'sync', value: create(SyncMarkerSchema, { ...item.marker, sequence: lastSent }) },
          });
    options.send(message);
  }

  function closePending(): void {
    if (pending.length === 0) return;
    queue.push({ kind: 'batch', events: pending });
    pending = [];
    pendingBytes = 0;
    flushDue = false;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (immediate !== undefined) clearImmediate(immediate);
    immediate = undefined;
  }

  function pump(): void {
    if (closed) return;
    while (queue.length > 0 && windowOpen()) sendQueued(queue.shift()!);
    if (
      queue.length === 0 &&
      windowOpen() &&
      pending.length > 0 &&
      (flushDue || inFlight() === 0 || pending.length >= options.batchMaxEvents || pendingBytes >= options.batchMaxBytes)
    ) {
      closePending();
      sendQueued(queue.shift()!);
    }
    if (isReady() && waiters.length > 0) {
      const ready = waiters;
      waiters = [];
      for (const w of ready) w.resolve();
    }
  }

  return {
    pushEvent(event) {
      if (closed) return;
      const message = create(EventSchema, event);
      pending.push(message);
      pendingBytes += message.objectJson.length;
      if (pending.length >= options.batchMaxEvents || pendingBytes >= options.batchMaxBytes) pump();
      else if (inFlight() === 0 && queue.length === 0) {
        // Idle: group commit sends the batch as soon as the current read is done, not after a timer.
        immediate ??= setImmediate(() => {
          immediate = undefined;
          pump();
        });
      } else if (timer === undefined) {
        timer = setTimeout(() => {
          timer = undefined;
          flushDue = true;
          pump();
        }, options.batchFlushMs);
      }
    },
    pushMarker(marker) {
      if (closed) return;
      closePending();
      queue.push({ kind: 'marker', marker });
      pump();
    },
    ready() {
      if (closed) return Promise.reject(new OutboxClosedError());
      if (isReady()) return Promise.resolve();
      return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
    },
    isReady,
    ack(sequence) {
      if (sequence > lastSent) sequence = lastSent;
      if (sequence > lastAcked) lastAcked = sequence;
      pump();
    },
    discardAccount(account) {
      const keep = (e: Event) => e.account !== account;
      pending = pending.filter(keep);
      pendingBytes = pending.reduce((sum, e) => sum + e.objectJson.length, 0);
      if (pending.length === 0) flushDue = false;
      for (let i = queue.length - 1; i >= 0; i--) {
        const item = queue[i]!;
        if (item.kind === 'marker' ? item.marker.account === account : (item.events = item.events.filter(keep)).length === 0)
          queue.splice(i, 1);
      }
      pump();
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (immediate !== undefined) clearImmediate(immediate);
      immediate = undefined;
      queue.length = 0;
      pending = [];
      const rejected = waiters;
      waiters = [];
      for (const w of rejected) w.reject(new OutboxClosedError());
    },
    get inFlight() {
      return inFlight();
    },
    get lastSent() {
      return lastSent;
    },
  };
}
