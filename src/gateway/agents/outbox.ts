/**
 * The outgoing half of an agent stream: an async-iterable queue the RPC handler reads from, fed by the request
 * loop (welcome, acks) and by timers (heartbeats). Consecutive acks are coalesced into the highest sequence.
 *
 * A plain iterator object rather than an async generator: a gateway holds thousands of idle streams, each waiting
 * on its outbox, and a suspended async generator costs a few kilobytes more than one pending promise.
 */
import { create } from '@bufbuild/protobuf';
import type { ConnectError } from '@connectrpc/connect';
import { ConnectResponseSchema, type ConnectResponse } from '../../gen/outpost/agent/v1/agent_pb.js';

/** A closable queue of responses. After close/fail, pushes are ignored. */
export interface Outbox extends AsyncIterableIterator<ConnectResponse> {
  push(message: ConnectResponse): void;
  /** Queues an ack, merging it into a queued ack not yet sent. */
  ack(sequence: bigint): void;
  /** Ends the stream after the queued messages. */
  close(): void;
  /** Ends the stream with an error (queued messages are still sent first). */
  fail(error: ConnectError): void;
  readonly closed: boolean;
  /** Stops reading: drops what is queued, ends the outbox (its error, if any, is not delivered). */
  return(): Promise<IteratorResult<ConnectResponse>>;
}

/** Creates an empty outbox. Iterate it once. */
export function createOutbox(): Outbox {
  return new QueueOutbox();
}

type Waiter = { resolve(result: IteratorResult<ConnectResponse>): void; reject(error: unknown): void };

class QueueOutbox implements Outbox {
  private readonly queue: ConnectResponse[] = [];
  private ended = false;
  /** The error to end with; set to null once it was delivered. */
  private error: ConnectError | null | undefined;
  private waiter: Waiter | undefined;

  get closed(): boolean {
    return this.ended;
  }

  push(message: ConnectResponse): void {
    if (this.ended) return;
    this.queue.push(message);
    this.settle();
  }

  ack(sequence: bigint): void {
    if (this.ended) return;
    const last = this.queue[this.queue.length - 1];
    if (last?.message.case === 'ack') {
      if (sequence > last.message.value.sequence) last.message.value.sequence = sequence;
      return;
    }
    this.push(create(ConnectResponseSchema, { message: { case: 'ack', value: { sequence } } }));
  }

  close(): void {
    this.ended = true;
    this.settle();
  }

  fail(error: ConnectError): void {
    if (!this.ended) this.error = error;
    this.ended = true;
    this.settle();
  }

  next(): Promise<IteratorResult<ConnectResponse>> {
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.settle();
    });
  }

  async return(): Promise<IteratorResult<ConnectResponse>> {
    this.ended = true;
    this.queue.length = 0;
    if (this.error) this.error = null;
    this.settle();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Hands the next message, the error, or the end to a waiting reader. */
  private settle(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    const message = this.queue.shift();
    if (message) {
      this.waiter = undefined;
      waiter.resolve({ value: message, done: false });
    } else if (this.ended) {
      this.waiter = undefined;
      const error = this.error;
      if (error) {
        this.error = null;
        waiter.reject(error);
      } else {
        waiter.resolve({ value: undefined, done: true });
      }
    }
  }
}
