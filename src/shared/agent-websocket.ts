/**
 * The agent stream carried over one WebSocket (docs/agent-protocol.md, "WebSocket transport"), shared by the agent's
 * client and the gateway's endpoint. The WebSocket itself (handshake, framing, masking, ping/pong) is the `ws`
 * package's; what is Outpost's own is small:
 *
 * - the agent opens `GET /outpost.agent.v1.AgentService/Connect` with `Upgrade: websocket`, subprotocol
 *   `outpost.agent.v1` and the same credentials as a gRPC stream (bearer token header, client certificate);
 * - each binary frame holds exactly one protobuf message: `ConnectRequest` from the agent, `ConnectResponse` from the
 *   gateway (the frame delimits it, so there is no gRPC length prefix);
 * - the gateway ends the stream with one text frame holding the status in the Connect protocol's end-stream JSON
 *   (`{"error": {"code", "message"}, "metadata": {…}}`, no `error` for OK), then a close frame 1000. A WebSocket
 *   that closes without that frame was cut: the agent treats it as UNAVAILABLE;
 * - a refused upgrade is an HTTP answer with the Connect error JSON (`{"code", "message"}`) and the matching status
 *   (401, 403, 404, 429, 503…), so the agent reports the same error a gRPC stream would get.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { codeFromHttpStatus, endStreamFromJson, endStreamToJson, errorFromJsonBytes } from '@connectrpc/connect/protocol-connect';

/** The request path of the WebSocket agent stream (the gRPC method's path). */
export const AGENT_WEBSOCKET_PATH = '/outpost.agent.v1.AgentService/Connect';

/** The WebSocket subprotocol both sides must agree on; another version of the wire would get another name. */
export const AGENT_WEBSOCKET_PROTOCOL = 'outpost.agent.v1';

/** Close code of a stream that ended with its status frame sent. */
export const NORMAL_CLOSURE = 1000;

/** The text frame that ends a stream: its status (OK without `error`) and metadata, as Connect end-stream JSON. */
export function encodeEndStream(error: ConnectError | undefined, metadata: Headers = error?.metadata ?? new Headers()): string {
  return JSON.stringify(endStreamToJson(metadata, error, undefined));
}

/** Reads a status frame; a malformed one is itself an error (INTERNAL), never an OK end. */
export function decodeEndStream(text: string): { error?: ConnectError; metadata: Headers } {
  try {
    const { error, metadata } = endStreamFromJson(text);
    if (error) metadata.forEach((value, key) => error.metadata.set(key, value));
    return { error, metadata };
  } catch (err) {
    return {
      error: new ConnectError(`protocol error: malformed end-of-stream frame: ${(err as Error).message}`, Code.Internal),
      metadata: new Headers(),
    };
  }
}

/**
 * The error of a refused upgrade (an HTTP answer instead of 101): the Connect error in the body when there is one,
 * else one derived from the HTTP status, naming it (a proxy's 403 or 502 has no Connect body).
 */
export function errorFromRefusedUpgrade(status: number, statusText: string, body: Uint8Array): ConnectError {
  const text = Buffer.from(body).toString('utf8').trim();
  const fallback = new ConnectError(
    `the WebSocket upgrade was answered HTTP ${status} ${statusText}${text ? `: ${text.slice(0, 200)}` : ''}`,
    codeFromHttpStatus(status),
  );
  if (!text.startsWith('{')) return fallback;
  const parsed = errorFromJsonBytes(body, undefined, fallback);
  return parsed === fallback ? fallback : new ConnectError(parsed.rawMessage, parsed.code, parsed.metadata);
}
