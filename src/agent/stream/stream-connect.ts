/**
 * The call shape a session streams over, whatever carries it (gRPC over HTTP/2 or a WebSocket): the agent's requests
 * in, the gateway's responses out. A stream that ends in error throws a `ConnectError` with the gateway's code and
 * metadata (the `x-outpost-reconnect` trailer among them) on either transport.
 */
import type { ConnectRequest, ConnectResponse } from '../../gen/outpost/agent/v1/agent_pb.js';

/** Opens the agent stream; aborting `signal` cancels it. */
export type StreamConnect = (
  requests: AsyncIterable<ConnectRequest>,
  options: { signal: AbortSignal; headers: Record<string, string> },
) => AsyncIterable<ConnectResponse>;

/** The transports an agent stream can use. */
export type TransportKind = 'grpc' | 'websocket';
