/**
 * The outgoing half of an agent stream: an async-iterable queue the RPC handler yields from, fed by the request
 * loop (welcome, acks) and by timers (heartbeats). Consecutive acks are coalesced into the highest sequence.
 */
import { create } from '@bufbuild/protobuf';
import type { ConnectError } from '@connectrpc/connect';
import { ConnectResponseSchema, type ConnectResponse } from '../../gen/outpost/agent/v1/agent_pb.js';

/** A closable queue of responses. After close/fail, pushes are ignored. */
export interface Outbox extends AsyncIterable<ConnectResponse> {
  push(message: ConnectResponse): void;
  /** Queues an ack, merging it into a queued ack not yet sent. */
  ack(sequence: bigint): void;
  /** Ends the stream after the queued messages. */
  close(): void;
  /** Ends the stream with an error (queued messages are still sent first). */
  fail(error: ConnectError): void;
  readonly closed: boolean;
}

/** Creates an empty outbox. Iterate it once. */
export function createOutbox(): Outbox {
  const queue: ConnectResponse[] = [];
  let ended = false;
  let error: ConnectError | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  return {
    get closed() {
      return ended;
    },
    push(message) {
      if (ended) return;
      queue.push(message);
      notify();
    },
    ack(sequence) {
      if (ended) return;
      const last = queue[queue.length - 1];
      if (last?.message.case === 'ack') {
        if (sequence > last.message.value.sequence) last.message.value.sequence = sequence;
        return;
      }
      queue.push(create(ConnectResponseSchema, { message: { case: 'ack', value: { sequence } } }));
      notify();
    },
    close() {
      ended = true;
      notify();
    },
    fail(err) {
      if (!ended) error = err;
      ended = true;
      notify();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const next = queue.shift();
        if (next) {
          yield next;
          continue;
        }
        if (ended) {
          if (error) throw error;
          return;
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}
