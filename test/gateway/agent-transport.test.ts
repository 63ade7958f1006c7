/**
 * Which transport carries each agent stream: a real gRPC stream and a stream the session code serves as a WebSocket
 * one (testkit/local-agent-stream.ts, on the same database) are recorded in `agent_sessions.transport` and shown per
 * stream by REST `GET /armory/agents[/{id}]` and ListAgents, and per account (the live stream caching it) by
 * ListAccounts, GetAccount and REST `/armory/accounts`; an account whose stream ended, or that a stream only stands by
 * for, shows none.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { AccountService } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { openLocalAgentStream } from '../../testkit/local-agent-stream.js';
import { connectAgent, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

for (const driver of testDrivers()) {
  describe(`agent stream transports (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let client: Client<typeof AccountService>;
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver);
      client = createClient(AccountService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
    });
    after(async () => {
      for (const s of streams) s.abort();
      await Promise.all(streams.map((s) => s.ended));
      await t?.close();
    });
    const rest = async <T = Record<string, unknown>>(path: string): Promise<T> => {
      const res = await fetch(`${t.gateway.httpUrl}${path}`);
      assert.equal(res.status, 200, path);
      return (await res.json()) as T;
    };
    const accountTransports = async () => Object.fromEntries((await client.listAccounts({})).accounts.map((a) => [a.name, a.transport]));

    test('each stream and each account it caches show the transport the stream came over', async () => {
      const grpc = openAgentStream(t.gateway.grpcUrl);
      streams.push(grpc);
      const grpcWelcome = await connectAgent(grpc, 'agent-grpc', [{ name: 'tr-grpc' }]);
      const ws = openLocalAgentStream({ database: t.gateway.database, gatewayId: t.gateway.id, transport: 'websocket' });
      streams.push(ws);
      // tr-grpc is cached by the gRPC stream: the WebSocket stream stands by for it.
      const wsWelcome = await connectAgent(ws, 'agent-ws', [{ name: 'tr-ws' }, { name: 'tr-grpc' }]);
      assert.deepEqual(Object.fromEntries(wsWelcome.accounts.map((a) => [a.account, Verdict[a.verdict]])), {
        'tr-ws': 'CACHING',
        'tr-grpc': 'STANDBY',
      });

      const stored = await t.query<{ id: string; transport: string }>(`select id, transport from agent_sessions order by agent_id`);
      assert.deepEqual(stored, [
        { id: grpcWelcome.sessionId, transport: 'grpc' },
        { id: wsWelcome.sessionId, transport: 'websocket' },
      ]);

      const listed = await rest<Record<string, unknown>[]>('/armory/agents');
      assert.deepEqual(
        listed.map((a) => [a.agentId, a.sessionId, a.transport]),
        [
          ['agent-grpc', grpcWelcome.sessionId, 'grpc'],
          ['agent-ws', wsWelcome.sessionId, 'websocket'],
        ],
      );
      assert.equal((await rest('/armory/agents/agent-ws')).transport, 'websocket');
      assert.equal((await rest('/armory/agents/agent-grpc')).transport, 'grpc');
      assert.deepEqual(
        (await client.listAgents({})).agents.map((a) => [a.agentId, a.transport]),
        [
          ['agent-grpc', 'grpc'],
          ['agent-ws', 'websocket'],
        ],
      );

      assert.deepEqual(await accountTransports(), { 'tr-grpc': 'grpc', 'tr-ws': 'websocket' });
      assert.equal((await client.getAccount({ name: 'tr-ws' })).account?.transport, 'websocket');
      assert.equal((await rest('/armory/accounts/tr-ws')).transport, 'websocket');

      // The WebSocket stream ends: its account is cached by no live stream, its row keeps the transport it had.
      ws.end();
      assert.equal(await ws.ended, undefined);
      assert.deepEqual(await accountTransports(), { 'tr-grpc': 'grpc', 'tr-ws': '' });
      assert.equal('transport' in (await rest('/armory/accounts/tr-ws')), false, 'empty fields are left out of the JSON');
      assert.deepEqual(
        (
          await t.query<{ transport: string; ended: boolean }>(
            `select transport, ended_at is not null as ended from agent_sessions where id = '${wsWelcome.sessionId}'`,
          )
        ).map((r) => [r.transport, r.ended]),
        [['websocket', true]],
      );
      assert.deepEqual(
        (await client.listAgents({})).agents.map((a) => [a.agentId, a.transport]),
        [['agent-grpc', 'grpc']],
      );
    });
  });
}
