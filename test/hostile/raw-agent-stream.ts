/**
 * An interactive agent stream over a raw HTTP/2 client: the case writes messages (or arbitrary payload bytes) one at
 * a time, reads the gateway's answers as they come (to wait for a Welcome or an Ack before the next step), and gets
 * the whole exchange at the end for the judge. A gRPC client library would not let a case send a mutated payload in
 * the middle of an otherwise valid conversation.
 */
import http2 from 'node:http2';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  ConnectRequestSchema,
  ConnectResponseSchema,
  type ConnectRequest,
  type ConnectResponse,
} from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { createMessageDecoder, encodeMessage } from '../../src/gateway/grpc/grpc-wire.js';
import { AGENT_PATH } from './agent-messages.js';
import { NoAnswerError, type RawReply } from './raw-http.js';

/** A stream in progress. */
export interface RawAgentStream {
  /** Writes a message, or payload bytes framed as one message. */
  send(message: ConnectRequest | Uint8Array): void;
  /** Half-closes the request side, as an agent shutting down does. */
  end(): void;
  /** The next answer that is not a heartbeat; undefined once the stream ended. Rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<ConnectResponse | undefined>;
  /** The whole exchange once the gateway ended it (rejects with {@link NoAnswerError} after `timeoutMs` from now). */
  finished(timeoutMs?: number): Promise<RawReply>;
  /** Tears the connection down (after a failure of the case). */
  destroy(): void;
}

/** Opens `AgentService/Connect` in gRPC form on `grpcUrl`. */
export function openRawAgentStream(grpcUrl: string): RawAgentStream {
  const session = http2.connect(grpcUrl);
  session.on('error', () => {});
  const stream = session.request({ ':method': 'POST', ':path': AGENT_PATH, 'content-type': 'application/grpc', te: 'trailers' });
  const decoder = createMessageDecoder(64 * 1024 * 1024);
  const reply: RawReply = { status: 0, headers: {}, trailers: {}, body: Buffer.alloc(0) };
  const body: Buffer[] = [];
  const queue: ConnectResponse[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  stream.on('response', (h) => {
    reply.status = Number(h[':status']);
    reply.headers = Object.fromEntries(Object.entries(h).map(([k, v]) => [k, String(v)]));
  });
  stream.on('trailers', (t) => (reply.trailers = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, String(v)]))));
  stream.on('data', (chunk: Buffer) => {
    body.push(chunk);
    try {
      for (const m of decoder.push(chunk)) {
        const res = fromBinary(ConnectResponseSchema, m.data);
        if (res.message.case !== 'heartbeat') queue.push(res);
      }
    } catch {
      // the judge reads the body itself; a malformed answer shows up there
    }
    notify();
  });
  const done = new Promise<void>((resolve) => {
    const finish = () => {
      ended = true;
      notify();
      resolve();
    };
    stream.on('close', finish);
    stream.on('error', () => {});
  });
  return {
    send(message) {
      if (stream.writable) stream.write(encodeMessage(message instanceof Uint8Array ? message : toBinary(ConnectRequestSchema, message)));
    },
    end() {
      if (stream.writable) stream.end();
    },
    async next(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = queue.shift();
        if (m) return m;
        if (ended) return undefined;
        const left = deadline - Date.now();
        if (left <= 0) throw new NoAnswerError('the next agent stream message', timeoutMs);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, left).unref();
        });
      }
    },
    async finished(timeoutMs = 30_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new NoAnswerError('the end of the agent stream', timeoutMs)), timeoutMs);
      });
      try {
        await Promise.race([done, timeout]);
      } finally {
        clearTimeout(timer);
        session.close();
      }
      return { ...reply, body: Buffer.concat(body) };
    },
    destroy() {
      session.destroy();
    },
  };
}
