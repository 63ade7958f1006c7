/**
 * The agent stream over WebSocket, end to end over real sockets: an agent with `clouddriver.transport: websocket`
 * dialling the gateway's HTTP port fills the cache, runs operations, and survives a gateway restart by resuming its
 * session (no scope listed again). The upgrade is refused before any WebSocket exists for a wrong path, a missing
 * subprotocol or missing/bad credentials, with the Connect error JSON the agent reports.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { describeFailure } from '../../src/client/format.js';
import { createOperationClient } from '../../src/client/operation-client.js';
import { OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { AGENT_WEBSOCKET_PATH, AGENT_WEBSOCKET_PROTOCOL } from '../../src/shared/agent-websocket.js';
import { upgradeAnswer } from '../../testkit/websocket-upgrade.js';
import { createLogger } from '../../src/shared/logger.js';
import { captureLogs } from '../../testkit/log-capture.js';
import { waitForAccounts } from '../../testkit/accounts-ready.js';
import { waitForCacheToMatch } from '../../testkit/cache-compare.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { startTestGateway } from '../../testkit/test-gateway.js';
import { createTestPki, startAuthGateway } from '../../testkit/auth-helpers.js';

async function syncGens(stack: Stack): Promise<string> {
  const rows = await stack.gateway.database.db.execute(
    sql`select api_version, kind, watch_namespace, sync_gen from watch_states where account = 'sandbox' order by 1, 2, 3`,
  );
  return JSON.stringify((rows as { rows?: unknown }).rows ?? rows);
}

describe('agent stream over WebSocket', { concurrency: false }, () => {
  let stack: Stack;
  const logs = captureLogs();
  let wsAddress: string;

  before(async () => {
    stack = await startStack({ persistent: true });
    wsAddress = new URL(stack.gateway.httpUrl).host;
    await stack.startAgent({
      config: { clouddriver: { transport: 'websocket', websocket: wsAddress } },
      logger: createLogger({ level: 'debug', destination: logs.stream }),
    });
    await waitForAccounts(stack.gateway.httpUrl, ['sandbox']);
  });
  after(async () => {
    await stack?.close();
  });

  test('the cache fills and operations run over the WebSocket', async () => {
    await waitForCacheToMatch(stack.gateway.database, stack.sandbox, 'sandbox', { timeoutMs: 30_000 });
    const transportLine = logs.lines().find((l) => String(l.msg).startsWith('transport:'));
    assert.equal(transportLine?.transport, 'websocket');
    assert.match(String(transportLine?.msg), /transport: WebSocket \(clouddriver\.transport is websocket\)/);
    assert.equal(stack.proxy.upstreamBytes().length, 0, 'nothing went to the gRPC port');
    assert.equal(stack.agents[0]!.status().transport?.kind, 'websocket', "the agent's status says WebSocket");
    // The gateway records and shows the stream's transport: per stream, and for the account it caches.
    const agents = (await (await fetch(`${stack.gateway.httpUrl}/armory/agents`)).json()) as { transport: string }[];
    assert.deepEqual(
      agents.map((a) => a.transport),
      ['websocket'],
    );
    const account = (await (await fetch(`${stack.gateway.httpUrl}/armory/accounts/sandbox`)).json()) as { transport?: string };
    assert.equal(account.transport, 'websocket');
    const client = createOperationClient({ gatewayUrl: stack.gateway.httpUrl });
    const record = await client.submitAndWait({
      account: 'sandbox',
      id: '',
      timeout: { seconds: 30n },
      spec: { case: 'scale', value: { kind: 'Deployment', namespace: 'demo', name: 'web', replicas: 4 } },
    });
    assert.equal(record.state, OperationState.SUCCEEDED, `${OperationState[record.state]} ${describeFailure(record)}`);
    const web = stack.sandbox.store.get('apps/v1', 'Deployment', 'demo', 'web') as { spec: { replicas: number } } | undefined;
    assert.equal(web?.spec.replicas, 4);
  });

  test('a gateway restart is survived by resuming the session: no scope is listed again', async () => {
    const before = await syncGens(stack);
    const welcomes = () => logs.lines().filter((l) => l.msg === 'welcomed by the gateway');
    const count = welcomes().length;
    await stack.restartGateway();
    await eventually('welcomed again', () => welcomes().length > count, { timeoutMs: 60_000 });
    const [previous, latest] = welcomes().slice(-2);
    assert.equal(latest!.resumed, previous!.sessionId, 'the new stream resumed the previous session');
    stack.sandbox.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-ws-restart', namespace: 'demo' } });
    await waitForCacheToMatch(stack.gateway.database, stack.sandbox, 'sandbox', { timeoutMs: 30_000 });
    assert.equal(await syncGens(stack), before, 'a scope was listed again although the session resumed');
  });

  test('the upgrade is refused for a wrong path or a missing subprotocol', async () => {
    const base = `ws://${new URL(stack.gateway.httpUrl).host}`;
    const wrongPath = await upgradeAnswer(`${base}/nothing/here`, [AGENT_WEBSOCKET_PROTOCOL]);
    assert.equal(wrongPath.status, 404);
    assert.equal(JSON.parse(wrongPath.body).code, 'not_found');
    const noProtocol = await upgradeAnswer(`${base}${AGENT_WEBSOCKET_PATH}`, ['something-else']);
    assert.equal(noProtocol.status, 400);
    assert.match(JSON.parse(noProtocol.body).message, /subprotocol "outpost\.agent\.v1"/);
  });
});

describe('agent WebSocket authentication', () => {
  test('no or a wrong bearer token: 401 before any WebSocket, a token without the agent role: 403', async () => {
    const t = await startTestGateway('pglite', {
      insecure: false,
      auth: {
        tokens: [
          { subject: 'agent-x', token: 'agent-token-0123456789' },
          { subject: 'reader', token: 'reader-token-0123456789' },
        ],
      },
      authorization: {
        rules: [
          { kind: 'token', subject: '^agent-x$', roles: ['agent'], accounts: ['*'] },
          { kind: 'token', subject: '^reader$', roles: ['read'] },
        ],
      },
    });
    try {
      const url = `ws://${new URL(t.gateway.httpUrl).host}${AGENT_WEBSOCKET_PATH}`;
      const none = await upgradeAnswer(url, [AGENT_WEBSOCKET_PROTOCOL]);
      assert.equal(none.status, 401);
      assert.equal(JSON.parse(none.body).code, 'unauthenticated');
      const wrong = await upgradeAnswer(url, [AGENT_WEBSOCKET_PROTOCOL], { authorization: 'Bearer not-a-token-0123456789' });
      assert.equal(wrong.status, 401);
      const reader = await upgradeAnswer(url, [AGENT_WEBSOCKET_PROTOCOL], { authorization: 'Bearer reader-token-0123456789' });
      assert.equal(reader.status, 403);
      assert.match(JSON.parse(reader.body).message, /lacks the role "agent"/);
      const agent = await upgradeAnswer(url, [AGENT_WEBSOCKET_PROTOCOL], { authorization: 'Bearer agent-token-0123456789' });
      assert.equal(agent.status, 101);
    } finally {
      await t.close();
    }
  });
});

describe('agent WebSocket over TLS with client certificates', () => {
  test('the TLS HTTP port upgrades for a valid client certificate with the agent role, and answers 401 without one', async () => {
    const pki = await createTestPki();
    const gw = await startAuthGateway({
      tls: { certFile: pki.certFile, keyFile: pki.keyFile, caFile: pki.caFile, clientAuth: 'OPTIONAL' },
      authorization: { rules: [{ kind: 'certificate', subject: '^CN=agent-1,O=agents$', roles: ['agent'], accounts: ['*'] }] },
    });
    try {
      const url = `wss://${new URL(gw.gateway.httpUrl).host}${AGENT_WEBSOCKET_PATH}`;
      assert.match(gw.gateway.httpUrl, /^https:/);
      const none = await upgradeAnswer(url, [AGENT_WEBSOCKET_PROTOCOL], {}, { ca: pki.caPem });
      assert.equal(none.status, 401);
      const agent = await upgradeAnswer(
        url,
        [AGENT_WEBSOCKET_PROTOCOL],
        {},
        { ca: pki.caPem, cert: pki.agent1.certPem, key: pki.agent1.keyPem },
      );
      assert.equal(agent.status, 101);
    } finally {
      await gw.close();
      pki.remove();
    }
  });
});
