/**
 * Which transport the next connection attempt uses (`clouddriver.transport`). `grpc` and `websocket` are fixed. `auto`
 * tries gRPC over HTTP/2 first; when an attempt fails in a way that means HTTP/2 cannot pass between agent and
 * gateway — TLS without `h2` in ALPN (or a handshake refused for offering only `h2`), an HTTP/1.1 answer to the HTTP/2 preface (an HTTP/1.1-only proxy), a stream
 * reset with HTTP_1_1_REQUIRED, an HTTP error status or a non-gRPC content type from something in the path — it
 * switches to WebSocket at once and keeps it for `retrySeconds`; the first attempt after that tries gRPC again. Other
 * failures (refused connection, untrusted certificate, bad credentials) would fail the same on either transport and
 * change nothing.
 */
import { ConnectError } from '@connectrpc/connect';
import { NoHttp2Error } from './gateway-socket.js';
import type { TransportKind } from './stream-connect.js';

/** `clouddriver.transport`. */
export type TransportMode = 'auto' | TransportKind;

/** The transport of one attempt and why it was chosen (logged, and shown in the agent's status). */
export interface TransportPick {
  kind: TransportKind;
  reason: string;
}

/** The choice, kept across attempts by the connection loop. */
export interface TransportChoice {
  next(): TransportPick;
  /**
   * Reports that HTTP/2 could not pass on an attempt over `kind` (see {@link http2CannotPass}), before any Welcome.
   * Returns true when the choice switched to WebSocket because of it (the caller retries at once, not backing off).
   */
  http2Refused(kind: TransportKind, why: string): boolean;
}

/** True when `err` says HTTP/2 cannot pass between the agent and the gateway (see the module comment). */
export function http2CannotPass(err: unknown): boolean {
  if (err instanceof NoHttp2Error) return true;
  const cause = err instanceof Error && err.cause instanceof NoHttp2Error;
  if (cause) return true;
  const message = err instanceof ConnectError ? err.rawMessage : err instanceof Error ? err.message : String(err);
  return /Protocol error|ERR_HTTP2_ERROR|HTTP_1_1_REQUIRED|^HTTP \d{3}$|unsupported content type|does not offer HTTP\/2|no application protocol/i.test(
    message,
  );
}

/** Creates the choice; `now` is injectable for tests. */
export function createTransportChoice(mode: TransportMode, retrySeconds: number, now: () => number = Date.now): TransportChoice {
  let webSocketUntil = 0;
  let fallbackReason = '';
  let retried = false;
  return {
    next() {
      if (mode !== 'auto') return { kind: mode, reason: `clouddriver.transport is ${mode}` };
      if (now() < webSocketUntil) return { kind: 'websocket', reason: fallbackReason };
      if (webSocketUntil > 0 && !retried) {
        retried = true;
        return { kind: 'grpc', reason: `auto: trying gRPC over HTTP/2 again after ${retrySeconds} s on WebSocket` };
      }
      return { kind: 'grpc', reason: 'auto: gRPC over HTTP/2 first' };
    },
    http2Refused(kind, why) {
      if (mode !== 'auto' || kind !== 'grpc') return false;
      webSocketUntil = now() + retrySeconds * 1000;
      retried = false;
      fallbackReason = `auto: HTTP/2 cannot pass (${why}); using WebSocket for ${retrySeconds} s`;
      return true;
    },
  };
}
