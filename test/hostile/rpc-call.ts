/**
 * Sends a request body to an RPC method in any wire form the gateway serves — Connect unary (JSON, binary, GET),
 * Connect streaming envelopes, gRPC and gRPC-JSON over HTTP/2, gRPC-web — and judges the reply. Server streams are
 * read until their first message (they may never end by themselves). An accepted request owns every string it
 * carried: the account names and ids it may have written under.
 */
import { fromBinary, fromJson, toJson, type DescMethod, type JsonValue } from '@bufbuild/protobuf';
import { encodeMessage } from '../../src/gateway/grpc/grpc-wire.js';
import { guarded, type CaseResult } from './hostile-case.js';
import type { HostileTarget } from './hostile-target.js';
import { http1Request, http2Request, type RawReply } from './raw-http.js';
import { hasWholeFrame } from './reply-verdict.js';
import { protocolOfReply } from './agent-messages.js';
import { judgeReply } from './reply-verdict.js';

/** How the body travels. */
export type RpcWire = 'connect-json' | 'connect-proto' | 'connect-get' | 'grpc' | 'grpc-json' | 'grpc-web';

/** The wires that carry binary protobuf, and those that carry JSON. */
export const BINARY_WIRES: readonly RpcWire[] = ['connect-proto', 'grpc', 'grpc-web'];
export const JSON_WIRES: readonly RpcWire[] = ['connect-json', 'connect-get', 'grpc-json'];

/** Options of one call. */
export interface RpcCallOptions {
  /** Headers added to (or replacing) the wire's own. */
  headers?: Record<string, string>;
  /** HTTP method instead of the wire's. */
  method?: string;
  /** Sent as is instead of the wire's framing of the body (already framed or deliberately unframed). */
  rawChunks?: Uint8Array[];
  /** Request path (and query) instead of the method's. */
  path?: string;
}

/** Sends `body` to `method` over `wire` and judges the reply. */
export function callRpc(
  target: HostileTarget,
  method: DescMethod,
  wire: RpcWire,
  body: Uint8Array,
  via: string,
  options: RpcCallOptions = {},
): Promise<CaseResult> {
  return guarded(via, async () => {
    const reply = await send(target, method, wire, body, options);
    const result = judgeReply(protocolOfReply(reply), reply, via, (options.method ?? '').toUpperCase() === 'HEAD');
    if (result.verdict.kind === 'accepted') return { ...result, owned: stringsOfRequest(method, wire, body) };
    return result;
  });
}

function send(target: HostileTarget, method: DescMethod, wire: RpcWire, body: Uint8Array, options: RpcCallOptions): Promise<RawReply> {
  const path = `/${method.parent.typeName}/${method.name}`;
  const streaming = method.methodKind !== 'unary';
  const bidi = method.methodKind === 'bidi_streaming' || method.methodKind === 'client_streaming';
  const stopWhen = streaming ? hasWholeFrame : undefined;
  const http2 = wire === 'grpc' || wire === 'grpc-json' || bidi;
  const base = http2 ? target.grpcUrl : target.httpUrl;
  const sendRaw = http2 ? http2Request : http1Request;
  const request = (m: string, p: string, headers: Record<string, string>, chunks: Uint8Array[]) =>
    sendRaw(base, {
      method: options.method ?? m,
      path: options.path ?? p,
      headers: { ...headers, ...options.headers },
      chunks: options.rawChunks ?? chunks,
      stopWhen,
      timeoutMs: 30_000,
    });
  switch (wire) {
    case 'connect-json':
    case 'connect-proto': {
      const kind = wire === 'connect-json' ? 'json' : 'proto';
      if (streaming) return request('POST', path, { 'content-type': `application/connect+${kind}` }, [encodeMessage(body)]);
      return request('POST', path, { 'content-type': `application/${kind}`, 'connect-protocol-version': '1' }, [body]);
    }
    case 'connect-get': {
      const text = Buffer.from(body).toString('utf8');
      const roundTrips = Buffer.from(text, 'utf8').equals(Buffer.from(body));
      const query = roundTrips
        ? `encoding=json&message=${encodeURIComponent(text)}`
        : `encoding=json&base64=1&message=${Buffer.from(body).toString('base64url')}`;
      return request('GET', `${path}?connect=v1&${query}`, {}, []);
    }
    case 'grpc':
      return request('POST', path, { 'content-type': 'application/grpc', te: 'trailers' }, [encodeMessage(body)]);
    case 'grpc-json':
      return request('POST', path, { 'content-type': 'application/grpc+json', te: 'trailers' }, [encodeMessage(body)]);
    case 'grpc-web':
      return request('POST', path, { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' }, [encodeMessage(body)]);
  }
}

/** Every string value of the request as the server could have decoded it (JSON or binary). */
function stringsOfRequest(method: DescMethod, wire: RpcWire, body: Uint8Array): string[] {
  let json: JsonValue | undefined;
  try {
    json = BINARY_WIRES.includes(wire)
      ? toJson(method.input, fromBinary(method.input, body))
      : toJson(method.input, fromJson(method.input, JSON.parse(Buffer.from(body).toString('utf8')) as JsonValue));
  } catch {
    try {
      json = JSON.parse(Buffer.from(body).toString('utf8')) as JsonValue;
    } catch {
      return [];
    }
  }
  return collectStrings(json);
}

/** Every string inside a JSON value. */
export function collectStrings(json: JsonValue): string[] {
  const out: string[] = [];
  const walk = (v: JsonValue) => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach((x) => walk(x as JsonValue));
  };
  walk(json);
  return out;
}
