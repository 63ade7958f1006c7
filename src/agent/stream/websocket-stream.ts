/**
 * The agent stream over one WebSocket (src/shared/agent-websocket.ts has the wire): for networks where HTTP/2 cannot
 * pass. It offers the session the same call shape as the gRPC client (`StreamConnect`): requests in, responses out,
 * and a `ConnectError` with the gateway's code and metadata when the stream ends in error — so session.ts and the
 * connection loop do not know which transport carries them. The socket is dialled by the caller (gateway-socket.ts:
 * direct or through a forward proxy, TLS done), and `ws` does the WebSocket.
 */
import type { Duplex } from 'node:stream';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { type RawData, WebSocket } from 'ws';
import {
  ConnectRequestSchema,
  ConnectResponseSchema,
  type ConnectRequest,
  type ConnectResponse,
} from '../../gen/outpost/agent/v1/agent_pb.js';
import { AGENT_WEBSOCKET_PROTOCOL, decodeEndStream, errorFromRefusedUpgrade, NORMAL_CLOSURE } from '../../shared/agent-websocket.js';
import type { StreamConnect } from './stream-connect.js';

/** Largest message read from the gateway. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Bytes queued on the WebSocket before the agent waits for them to reach the socket. */
const SEND_HIGH_WATER = 256 * 1024;
/** Responses queued ahead of the session before reading pauses. */
const QUEUE_HIGH_WATER = 16;
/** Longest body of a refused upgrade read for its error message. */
const REFUSAL_BODY_BYTES = 4096;

/** A `StreamConnect` that opens one WebSocket to `url` over the socket `dial` returns (called once). */
export function webSocketConnect(url: URL, dial: () => Duplex): StreamConnect {
  return (requests, { signal, headers }) => {
    const ws = new WebSocket(url, AGENT_WEBSOCKET_PROTOCOL, {
      headers,
      perMessageDeflate: false,
      maxPayload: MAX_MESSAGE_BYTES,
      createConnection: dial,
    });
    return readResponses(ws, requests, signal);
  };
}

async function* readResponses(
  ws: WebSocket,
  requests: AsyncIterable<ConnectRequest>,
  signal: AbortSignal,
): AsyncGenerator<ConnectResponse> {
  const queue: ConnectResponse[] = [];
  let end: { error?: ConnectError } | undefined;
  let wake: (() => void) | undefined;
  const finish = (error?: ConnectError) => {
    end ??= { error };
    wake?.();
  };
  ws.on('unexpected-response', (_req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      if (size < REFUSAL_BODY_BYTES) chunks.push(chunk);
      size += chunk.length;
    });
    res.on('end', () => {
      finish(errorFromRefusedUpgrade(res.statusCode ?? 0, res.statusMessage ?? '', Buffer.concat(chunks).subarray(0, REFUSAL_BODY_BYTES)));
      ws.terminate();
    });
    res.on('error', () => finish(new ConnectError(`the WebSocket upgrade was answered HTTP ${res.statusCode}`, Code.Unavailable)));
  });
  ws.on('message', (data: RawData, isBinary: boolean) => {
    if (end) return;
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (!isBinary) {
      finish(decodeEndStream(bytes.toString('utf8')).error);
      return;
    }
    try {
      queue.push(fromBinary(ConnectResponseSchema, bytes));
    } catch (err) {
      finish(new ConnectError(`protocol error: cannot decode a message from the gateway: ${(err as Error).message}`, Code.Internal));
      return;
    }
    if (queue.length >= QUEUE_HIGH_WATER) ws.pause();
    wake?.();
  });
  ws.on('error', (err: Error) => finish(new ConnectError(err.message, Code.Unavailable, undefined, undefined, err)));
  ws.on('close', (code: number, reason: Buffer) => {
    const why = reason.length > 0 ? `: ${reason.toString('utf8')}` : '';
    const codeOf = code === 1009 ? Code.ResourceExhausted : Code.Unavailable;
    finish(new ConnectError(`the WebSocket to the gateway closed without a status (code ${code}${why})`, codeOf));
  });
  const onAbort = () => {
    finish(new ConnectError('the stream was cancelled', Code.Canceled));
    ws.close(NORMAL_CLOSURE);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort();
  const pump = sendRequests(ws, requests).catch((err: unknown) =>
    finish(new ConnectError(`cannot send to the gateway: ${(err as Error).message}`, Code.Unavailable)),
  );
  try {
    for (;;) {
      while (queue.length > 0) {
        const next = queue.shift()!;
        if (queue.length < QUEUE_HIGH_WATER && ws.isPaused) ws.resume();
        yield next;
      }
      if (end) {
        if (end.error) throw end.error;
        return;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (ws.readyState === WebSocket.OPEN) ws.close(NORMAL_CLOSURE);
    else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    void pump;
  }
}

/** Writes each request as one binary frame, waiting while too much is queued; returns when the requests end. */
async function sendRequests(ws: WebSocket, requests: AsyncIterable<ConnectRequest>) {
  if (ws.readyState === WebSocket.CONNECTING) {
    await new Promise<void>((resolve) => {
      ws.once('open', () => resolve());
      ws.once('close', () => resolve());
    });
  }
  for await (const request of requests) {
    if (ws.readyState !== WebSocket.OPEN) return;
    const data = toBinary(ConnectRequestSchema, request);
    if (ws.bufferedAmount < SEND_HIGH_WATER) ws.send(data);
    else await new Promise<void>((resolve) => ws.send(data, () => resolve()));
  }
}
