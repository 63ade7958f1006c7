/**
 * The request side of an agent stream as the session sees it, whatever carries it (gRPC over HTTP/2 or a WebSocket):
 * an async iterator of decoded messages that ends when the agent ends its side and fails on malformed input or when
 * the peer goes away. The transport pushes what it decoded; past a few queued messages it is told to pause reading,
 * so the transport's own flow control (HTTP/2 windows, TCP) holds the agent back until the session catches up.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { ConnectRequest } from '../../gen/outpost/agent/v1/agent_pb.js';

/** Decoded requests queued ahead of the session before the transport is paused. */
const QUEUE_HIGH_WATER = 8;

/** How the queue holds back the transport that feeds it. */
export interface StreamFlow {
  pause(): void;
  resume(): void;
  /** Called once when the queue ends or fails: remove the transport's listeners. */
  detach(): void;
}

type Waiter = { resolve(result: IteratorResult<ConnectRequest>): void; reject(error: unknown): void };

/**
 * A class, not closures: one of these lives per idle agent stream (thousands per replica). The transport calls
 * `push`, `end` and `fail`; the session iterates.
 */
export class StreamRequests implements AsyncIterableIterator<ConnectRequest> {
  private readonly queue: ConnectRequest[] = [];
  private ended = false;
  private error: ConnectError | undefined;
  private waiter: Waiter | undefined;
  private paused = false;

  constructor(private readonly flow: StreamFlow) {}

  /** Queues a decoded message (ignored once ended or failed). */
  push(message: ConnectRequest): void {
    if (this.error || this.ended) return;
    this.queue.push(message);
    if (this.queue.length >= QUEUE_HIGH_WATER && !this.paused) {
      this.paused = true;
      this.flow.pause();
    }
    this.settle();
  }

  /** The agent ended its side cleanly: the session reads what is queued, then the end. */
  end(): void {
    if (this.error || this.ended) return;
    this.ended = true;
    this.flow.detach();
    this.settle();
  }

  /** Ends the stream with `error`: what is queued is dropped, and the session's next read throws it. */
  fail(error: ConnectError): void {
    if (this.ended || this.error) return;
    this.error = error;
    this.queue.length = 0;
    this.flow.detach();
    this.settle();
  }

  /** True once ended or failed. */
  get finished(): boolean {
    return this.ended || this.error !== undefined;
  }

  next(): Promise<IteratorResult<ConnectRequest>> {
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.settle();
    });
  }

  async return(): Promise<IteratorResult<ConnectRequest>> {
    this.fail(new ConnectError('the stream was closed', Code.Canceled));
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Hands the next message, the error, or the end to a waiting reader. */
  private settle(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    const next = this.queue.shift();
    if (next) {
      this.waiter = undefined;
      waiter.resolve({ value: next, done: false });
      if (this.paused && this.queue.length < QUEUE_HIGH_WATER) {
        this.paused = false;
        this.flow.resume();
      }
    } else if (this.error) {
      this.waiter = undefined;
      waiter.reject(this.error);
    } else if (this.ended) {
      this.waiter = undefined;
      waiter.resolve({ value: undefined, done: true });
    }
  }
}
