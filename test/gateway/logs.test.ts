/**
 * Structured logs: the gateway writes JSON lines whose fields name the agent, session, account and operation they
 * are about, at the configured level, and never the session token.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { loadGatewayConfig, startGateway } from '../../src/gateway/index.js';
import { createLogger } from '../../src/shared/logger.js';
import { createTestDatabase } from '../../testkit/databases.js';
import { startOperationAgent } from './operations-helpers.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';

test('gateway log lines are JSON carrying agent, session, account and operation ids; the level comes from config', async () => {
  const db = await createTestDatabase('pglite');
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const config = loadGatewayConfig({
    env: {},
    overrides: { host: '127.0.0.1', httpPort: 0, grpcPort: 0, database: db.url, id: 'gw-logs', insecure: true, logLevel: 'debug' },
  });
  const gateway = await startGateway(config, { logger: createLogger({ level: config.logLevel, destination: out }) });
  try {
    const agent = await startOperationAgent(gateway.grpcUrl, 'agent-logs', ['logs-acct']);
    const client = createClient(OperationService, createGrpcTransport({ baseUrl: gateway.grpcUrl }));
    const op = await client.submitOperation({
      account: 'logs-acct',
      id: 'op-logged',
      wait: true,
      spec: { case: 'patch', value: { kind: 'ConfigMap', name: 'x', type: PatchType.MERGE, patch: '{}' } },
    });
    assert.equal(op.operation?.state, OperationState.SUCCEEDED);
    const welcome = agent.stream.received.find((r) => r.message.case === 'welcome')!.message.value as { sessionToken: string };
    assert.ok(welcome.sessionToken.length > 20);
    await agent.close();
    assert.ok(!text.includes(welcome.sessionToken), 'the session token is never logged');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(lines.every((l) => typeof l.level === 'number' && typeof l.time === 'number' && typeof l.msg === 'string'));
    const connected = lines.find((l) => l.msg === 'agent connected');
    assert.ok(connected, 'agent connected is logged');
    assert.equal(connected.agentId, 'agent-logs');
    assert.equal(connected.gatewayId, 'gw-logs');
    assert.equal(connected.transport, 'grpc');
    assert.match(String(connected.sessionId), /^[0-9a-f-]{36}$/);
    const operation = lines.filter((l) => l.operationId === 'op-logged');
    assert.ok(
      operation.some((l) => l.account === 'logs-acct'),
      'operation lines name the account',
    );
    assert.ok(
      lines.some((l) => l.level === 20),
      'debug lines are written at level debug',
    );
  } finally {
    await gateway.close();
    await db.drop();
  }
});
