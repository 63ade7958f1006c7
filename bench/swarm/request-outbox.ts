/**
 * The request side of a simulated agent's stream: messages pushed at any time, handed to the client-streaming call as
 * an async iterable that waits when empty and ends once closed. Shared by the connection swarm (agent-swarm.ts) and
 * the infrastructure loader (../infra-loader.ts), which both speak the agent protocol without the agent.
 */
import { create } from '@bufbuild/protobuf';
import { ConnectRequestSchema, type ConnectRequest } from '../../src/gen/outpost/agent/v1/agent_pb.js';

/** A message of the stream (ConnectRequest's oneof). */
type RequestMessage = ConnectRequest['message'];

/** See the module comment. */
export interface RequestOutbox {
  push(message: RequestMessage): void;
  /** Ends the iterable once what was pushed is taken. */
  close(): void;
  readonly closed: boolean;
  readonly requests: AsyncIterable<ConnectRequest>;
}

/** Creates an empty outbox. */
export function createRequestOutbox(): RequestOutbox {
  const outgoing: RequestMessage[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  const nudge = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const requests = (async function* () {
    for (;;) {
      const message = outgoing.shift();
      if (message) yield create(ConnectRequestSchema, { message });
      else if (closed) return;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  })();
  return {
    push(message) {
      outgoing.push(message);
      nudge();
    },
    close() {
      closed = true;
      nudge();
    },
    get closed() {
      return closed;
    },
    requests,
  };
}
