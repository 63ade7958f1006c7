/**
 * The agent behind a real nginx configured as an HTTP/1.1-only reverse proxy in front of the gateway's HTTP port
 * (docs/networks.md's configuration, testkit/nginx.ts): with the default `transport: auto` the agent's gRPC attempt
 * cannot pass, it falls back to WebSocket through the same address, the cache fills, operations run, and a gateway
 * restart behind nginx is survived with a resume (no scope listed again). Over TLS (nginx offers ALPN http/1.1 only)
 * the same fallback happens; an nginx that refuses upgrades leaves a clear error.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { describeFailure } from '../../src/client/format.js';
import { createOperationClient } from '../../src/client/operation-client.js';
import { OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createCertificateAuthority } from '../../src/sandbox/certs.js';
import { createLogger } from '../../src/shared/logger.js';
import { waitForAccounts } from '../../testkit/accounts-ready.js';
import { waitForCacheToMatch } from '../../testkit/cache-compare.js';
import { eventually } from '../../testkit/eventually.js';
import { startNginx, type NginxProxy } from '../../testkit/nginx.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { captureLogs, type LogCapture } from '../../testkit/log-capture.js';

async function syncGens(stack: Stack): Promise<string> {
  const rows = await stack.gateway.database.db.execute(
    sql`select api_version, kind, watch_namespace, sync_gen from watch_states where account = 'sandbox' order by 1, 2, 3`,
  );
  return JSON.stringify((rows as { rows?: unknown }).rows ?? rows);
}

describe('agent through nginx (HTTP/1.1 only)', { concurrency: false }, () => {
  let stack: Stack;
  let nginx: NginxProxy | undefined;
  let certDir: string;
  let logs: LogCapture;
  const httpPort = () => Number(new URL(stack.gateway.httpUrl).port);
  const startAgent = (logsTo: LogCapture, config: Record<string, unknown>, account = 'sandbox') =>
    stack.startAgent({
      id: `agent-${account}`,
      account: { name: account },
      config: { clouddriver: { reconnect: { baseSeconds: 0.2, factor: 2, maxSeconds: 1 }, ...config } },
      logger: createLogger({ level: 'debug', destination: logsTo.stream }),
    });

  before(async () => {
    stack = await startStack({ persistent: true });
    certDir = mkdtempSync(join(tmpdir(), 'outpost-nginx-e2e-'));
  });
  after(async () => {
    await stack?.close();
    await nginx?.stop();
    rmSync(certDir, { recursive: true, force: true });
  });

  test('auto falls back to WebSocket; the cache fills and operations run', async () => {
    nginx = await startNginx({ upstreamPort: httpPort(), mode: 'http1-reverse' });
    logs = captureLogs();
    await startAgent(logs, { grpc: `127.0.0.1:${nginx.port}` });
    await waitForAccounts(stack.gateway.httpUrl, ['sandbox'], { timeoutMs: 60_000 });
    const text = logs.text();
    assert.match(text, /HTTP\/2 cannot pass to the gateway at 127\.0\.0\.1:\d+: \[internal\] Protocol error; switching to WebSocket now/);
    const transport = logs
      .lines()
      .filter((l) => String(l.msg).startsWith('transport:'))
      .at(-1);
    assert.equal(transport?.transport, 'websocket');
    assert.match(String(transport?.why), /^auto: HTTP\/2 cannot pass \(\[internal\] Protocol error\); using WebSocket for 600 s$/);
    await waitForCacheToMatch(stack.gateway.database, stack.sandbox, 'sandbox', { timeoutMs: 30_000 });
    const record = await createOperationClient({ gatewayUrl: stack.gateway.httpUrl }).submitAndWait({
      account: 'sandbox',
      id: '',
      timeout: { seconds: 30n },
      spec: { case: 'scale', value: { kind: 'Deployment', namespace: 'demo', name: 'web', replicas: 5 } },
    });
    assert.equal(record.state, OperationState.SUCCEEDED, `${OperationState[record.state]} ${describeFailure(record)}`);
  });

  test('a gateway restart behind nginx is survived with a resume: no scope is listed again', async () => {
    const before = await syncGens(stack);
    const welcomes = () => logs.lines().filter((l) => l.msg === 'welcomed by the gateway');
    const count = welcomes().length;
    await stack.restartGateway();
    await eventually('welcomed again through nginx', () => welcomes().length > count, { timeoutMs: 60_000 });
    const [previous, latest] = welcomes().slice(-2);
    assert.equal(latest!.resumed, previous!.sessionId, 'the new stream resumed the previous session');
    stack.sandbox.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-nginx-restart', namespace: 'demo' } });
    await waitForCacheToMatch(stack.gateway.database, stack.sandbox, 'sandbox', { timeoutMs: 30_000 });
    assert.equal(await syncGens(stack), before, 'a scope was listed again although the session resumed');
    await stack.stopAgents();
    await nginx?.stop();
  });

  test('over TLS (ALPN http/1.1 only) auto falls back to wss', async () => {
    const pki = await createCertificateAuthority({ hosts: ['127.0.0.1'] });
    const files = { certFile: join(certDir, 'cert.pem'), keyFile: join(certDir, 'key.pem'), ca: join(certDir, 'ca.pem') };
    writeFileSync(files.certFile, pki.certPem);
    writeFileSync(files.keyFile, pki.keyPem);
    writeFileSync(files.ca, pki.caPem);
    nginx = await startNginx({
      upstreamPort: httpPort(),
      mode: 'http1-reverse',
      tls: { certFile: files.certFile, keyFile: files.keyFile },
    });
    const tlsLogs = captureLogs();
    await startAgent(tlsLogs, { grpc: `127.0.0.1:${nginx.port}`, insecure: false, tls: { cacertFile: files.ca } }, 'tls-account');
    await waitForAccounts(stack.gateway.httpUrl, ['tls-account'], { timeoutMs: 60_000 });
    assert.match(tlsLogs.text(), /no application protocol.*switching to WebSocket now/);
    const transport = tlsLogs
      .lines()
      .filter((l) => String(l.msg).startsWith('transport:'))
      .at(-1);
    assert.equal(transport?.transport, 'websocket');
    assert.match(String(transport?.gateway), /^wss:\/\/127\.0\.0\.1:\d+\/outpost\.agent\.v1\.AgentService\/Connect$/);
    await stack.stopAgents();
    await nginx.stop();
  });

  test('an nginx that refuses upgrades: the agent says what the proxy answered and keeps retrying', async () => {
    nginx = await startNginx({ upstreamPort: httpPort(), mode: 'block-upgrade' });
    const blockedLogs = captureLogs();
    await startAgent(blockedLogs, { grpc: `127.0.0.1:${nginx.port}` }, 'blocked');
    await eventually(
      'two refused WebSocket attempts',
      () =>
        (blockedLogs
          .text()
          .match(
            /cannot connect to the gateway at ws:\/\/[^:]+:\d+\/\S+: \[permission_denied\] the WebSocket upgrade was answered HTTP 403/g,
          )?.length ?? 0) >= 2,
      { timeoutMs: 30_000 },
    );
    await stack.stopAgents();
  });
});
