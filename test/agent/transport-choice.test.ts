/**
 * The agent's transport choice (`clouddriver.transport`), with an injected clock: `auto` starts on gRPC, switches to
 * WebSocket when HTTP/2 cannot pass, keeps it for `transportRetrySeconds`, then tries gRPC once more; fixed modes never
 * switch. And which errors mean "HTTP/2 cannot pass" (those real proxies produce: test/gateway/grpc-through-http1-proxies).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { NoHttp2Error } from '../../src/agent/stream/gateway-socket.js';
import { createTransportChoice, http2CannotPass } from '../../src/agent/stream/transport-choice.js';
import { webSocketUrl } from '../../src/agent/stream/transport.js';
import { parseAgentConfig } from '../../src/agent/config/load.js';

const loadAgentConfigFromObject = (raw: Record<string, unknown>) => parseAgentConfig(raw, {});

test('auto: gRPC first, WebSocket after HTTP/2 could not pass, gRPC again once the retry time is over', () => {
  let now = 1_000_000;
  const choice = createTransportChoice('auto', 600, () => now);
  assert.deepEqual(choice.next(), { kind: 'grpc', reason: 'auto: gRPC over HTTP/2 first' });
  assert.equal(choice.http2Refused('grpc', '[internal] Protocol error'), true);
  const fallback = choice.next();
  assert.equal(fallback.kind, 'websocket');
  assert.equal(fallback.reason, 'auto: HTTP/2 cannot pass ([internal] Protocol error); using WebSocket for 600 s');
  now += 599_000;
  assert.equal(choice.next().kind, 'websocket', 'kept for the retry time');
  now += 2000;
  assert.deepEqual(choice.next(), { kind: 'grpc', reason: 'auto: trying gRPC over HTTP/2 again after 600 s on WebSocket' });
  assert.equal(choice.next().reason, 'auto: gRPC over HTTP/2 first', 'the retry is said once');
  assert.equal(choice.http2Refused('grpc', 'HTTP 426'), true, 'still blocked: back to WebSocket');
  assert.equal(choice.next().kind, 'websocket');
});

test('fixed transports never switch; a WebSocket failure never switches', () => {
  for (const mode of ['grpc', 'websocket'] as const) {
    const choice = createTransportChoice(mode, 600);
    assert.deepEqual(choice.next(), { kind: mode, reason: `clouddriver.transport is ${mode}` });
    assert.equal(choice.http2Refused(mode, 'Protocol error'), false);
    assert.equal(choice.next().kind, mode);
  }
  const auto = createTransportChoice('auto', 600);
  assert.equal(auto.http2Refused('websocket', 'HTTP 403'), false);
  assert.equal(auto.next().kind, 'grpc');
});

test('what means HTTP/2 cannot pass, and what does not', () => {
  const cannot = [
    new ConnectError('Protocol error', Code.Internal),
    new ConnectError('HTTP 426', Code.Unknown),
    new ConnectError('HTTP 502', Code.Unavailable),
    new ConnectError('unsupported content type text/html', Code.Unknown),
    new ConnectError('Stream closed with error code NGHTTP2_HTTP_1_1_REQUIRED', Code.Internal),
    new Error('C0:error:0A000460:SSL routines:ssl3_read_bytes:tlsv1 alert no application protocol'),
    new NoHttp2Error('http/1.1'),
  ];
  for (const err of cannot) assert.equal(http2CannotPass(err), true, err.message);
  const can = [
    new ConnectError('connect ECONNREFUSED 127.0.0.1:1', Code.Unavailable),
    new ConnectError('This operation was aborted', Code.Canceled),
    new ConnectError('invalid session token', Code.Unauthenticated),
    new Error('self-signed certificate'),
    new ConnectError('http/2 stream closed with error code CANCEL (0x8)', Code.Canceled),
  ];
  for (const err of can) assert.equal(http2CannotPass(err), false, err.message);
});

test('the WebSocket URL: the grpc address by default, host:port, or a ws(s) URL keeping its path', () => {
  const url = (clouddriver: Record<string, unknown>) => webSocketUrl(loadAgentConfigFromObject({ clouddriver }).clouddriver).href;
  assert.equal(url({ grpc: 'gw.example:9091' }), 'ws://gw.example:9091/outpost.agent.v1.AgentService/Connect');
  assert.equal(url({ grpc: 'gw.example:9091', insecure: false }), 'wss://gw.example:9091/outpost.agent.v1.AgentService/Connect');
  assert.equal(url({ websocket: 'gw.example:7002' }), 'ws://gw.example:7002/outpost.agent.v1.AgentService/Connect');
  assert.equal(url({ websocket: 'wss://edge.example' }), 'wss://edge.example/outpost.agent.v1.AgentService/Connect');
  assert.equal(url({ websocket: 'wss://edge.example/outpost/connect' }), 'wss://edge.example/outpost/connect');
  assert.throws(
    () => loadAgentConfigFromObject({ clouddriver: { websocket: 'http://nope' } }),
    /expected host:port or a ws:\/\/ or wss:\/\/ URL/,
  );
  assert.throws(() => loadAgentConfigFromObject({ clouddriver: { transport: 'quic' } }), /transport/);
});
