/**
 * The agent through a real forward proxy (tinyproxy, testkit/tinyproxy.ts) with HTTP CONNECT and basic auth, on both
 * transports: gRPC over HTTP/2 to the gateway's gRPC port and WebSocket to its HTTP port, each inside a CONNECT tunnel.
 * A proxy restarted mid-stream costs a reconnect and nothing else (the cache stays exact); wrong credentials and a
 * proxy that refuses the CONNECT leave clear errors naming the proxy (never its password).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/shared/logger.js';
import { waitForAccounts } from '../../testkit/accounts-ready.js';
import { waitForCacheToMatch } from '../../testkit/cache-compare.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { startTinyproxy, type Tinyproxy } from '../../testkit/tinyproxy.js';
import { captureLogs, type LogCapture } from '../../testkit/log-capture.js';

const USER = 'agent';
const PASSWORD = 'proxy-pass-0123';

describe('agent through a forward proxy (HTTP CONNECT)', { concurrency: false }, () => {
  let stack: Stack;
  let proxy: Tinyproxy;
  const ports = () => [Number(new URL(stack.gateway.httpUrl).port), stack.proxy.port];
  const startAgent = (logs: LogCapture, account: string, clouddriver: Record<string, unknown>) =>
    stack.startAgent({
      id: `agent-${account}`,
      account: { name: account },
      config: { clouddriver: { reconnect: { baseSeconds: 0.2, factor: 2, maxSeconds: 1 }, ...clouddriver } },
      logger: createLogger({ level: 'debug', destination: logs.stream }),
    });
  const proxyUrl = (user = USER, password = PASSWORD) => `http://${user}:${password}@127.0.0.1:${proxy.port}`;

  before(async () => {
    stack = await startStack();
    proxy = await startTinyproxy({ auth: { user: USER, password: PASSWORD }, connectPorts: ports() });
  });
  after(async () => {
    await stack?.close();
    await proxy?.stop();
  });

  test('gRPC over HTTP/2 inside the tunnel; a proxy restart mid-stream loses nothing', async () => {
    const logs = captureLogs();
    await startAgent(logs, 'sandbox', { transport: 'grpc', proxy: proxyUrl() });
    await waitForAccounts(stack.gateway.httpUrl, ['sandbox'], { timeoutMs: 60_000 });
    await waitForCacheToMatch(stack.gateway.database, stack.sandbox, 'sandbox', { timeoutMs: 30_000 });
    assert.match(proxy.log(), /CONNECT/, 'the stream went through the proxy');
    const welcomes = () => logs.lines().filter((l) => l.msg === 'welcomed by the gateway').length;
    const count = welcomes();
    await proxy.restart();
    stack.sandbox.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'during-proxy-restart', namespace: 'demo' } });
    await eventually('welcomed again after the proxy restart', () => welcomes() > count, { timeoutMs: 60_000 });
    await waitForCacheToMatch(stack.gateway.database, stack.sandbox, 'sandbox', { timeoutMs: 30_000 });
    assert.doesNotMatch(logs.text(), new RegExp(PASSWORD), 'the proxy password was logged');
    await stack.stopAgents();
  });

  test('WebSocket inside the tunnel', async () => {
    const logs = captureLogs();
    const websocket = new URL(stack.gateway.httpUrl).host;
    await startAgent(logs, 'ws-account', { transport: 'websocket', websocket, proxy: proxyUrl() });
    await waitForAccounts(stack.gateway.httpUrl, ['ws-account'], { timeoutMs: 60_000 });
    const transport = logs.lines().find((l) => String(l.msg).startsWith('transport:'));
    assert.equal(transport?.transport, 'websocket');
    await stack.stopAgents();
  });

  test('wrong proxy credentials and a refused CONNECT: clear errors, retried', async () => {
    const wrong = captureLogs();
    await startAgent(wrong, 'wrong-credentials', { transport: 'grpc', proxy: proxyUrl(USER, 'not-the-password') });
    await eventually(
      'the credentials refusal logged twice',
      () =>
        wrong
          .lines()
          .filter((l) =>
            /^cannot connect to the gateway at [^:]+:\d+: the proxy at http:\/\/agent@127\.0\.0\.1:\d+ refused the credentials of user "agent"/.test(
              String(l.msg),
            ),
          ).length >= 2,
      { timeoutMs: 30_000 },
    );
    assert.doesNotMatch(wrong.text(), /not-the-password/);
    await stack.stopAgents();

    const refusing = await startTinyproxy({ connectPorts: [1] });
    try {
      const refused = captureLogs();
      await startAgent(refused, 'refused-connect', {
        transport: 'websocket',
        websocket: new URL(stack.gateway.httpUrl).host,
        proxy: `http://127.0.0.1:${refusing.port}`,
      });
      await eventually(
        'the refused CONNECT logged',
        () => /the proxy at http:\/\/127\.0\.0\.1:\d+ refused CONNECT to 127\.0\.0\.1:\d+: 403/.test(refused.text()),
        { timeoutMs: 30_000 },
      );
      await stack.stopAgents();
    } finally {
      await refusing.stop();
    }
  });
});
