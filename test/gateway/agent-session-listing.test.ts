/**
 * The connected-agents listing from `agent_sessions`: `AccountService.ListAgents` (gRPC and Connect JSON) and REST
 * `GET /armory/agents[/{id}]` show live streams with their transport and verdict lists, hide ended streams and rows a
 * dead replica left behind, and never expose the session token or its hash.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { AccountService } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { connectAgent, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

for (const driver of testDrivers()) {
  describe(`agents listing (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let client: Client<typeof AccountService>;
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, { agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 5 } });
      client = createClient(AccountService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
    });
    after(async () => {
      for (const s of streams) s.abort();
      await t?.close();
    });
    const open = () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      streams.push(s);
      return s;
    };
    const rest = async (path: string) => {
      const res = await fetch(`${t.gateway.httpUrl}${path}`);
      return { status: res.status, text: await res.text() };
    };

    test("live streams are listed with their verdicts; ended ones and a dead replica's rows are not; no token or hash", async () => {
      const first = open();
      const w1 = await connectAgent(first, 'agent-l1', [{ name: 'list-a' }, { name: 'list-b' }]);
      const second = open();
      // list-a is cached by agent-l1: STANDBY here.
      const w2 = await connectAgent(second, 'agent-l2', [{ name: 'list-a' }, { name: 'list-c' }]);
      const gone = open();
      const w3 = await connectAgent(gone, 'agent-gone', [{ name: 'list-d' }]);
      gone.end();
      await gone.ended;
      await eventually(
        'the third session ended',
        async () => (await t.query(`select 1 from agent_sessions where id = '${w3.sessionId}' and ended_at is not null`)).length === 1,
      );
      // A row left by a replica that died (never ended, not touched for long).
      await t.query(
        `insert into agent_sessions (id, agent_id, gateway_id, token_hash, connected_at, last_seen_at)
         values ('dead-session', 'agent-dead', 'gw-dead', '${'0'.repeat(64)}', now() - interval '1 hour', now() - interval '1 hour')`,
      );

      const { agents } = await client.listAgents({});
      assert.deepEqual(
        agents.map((a) => [
          a.agentId,
          a.sessionId,
          a.gatewayId,
          a.zone,
          a.version,
          a.subject,
          a.transport,
          a.caching,
          a.standby,
          a.refused,
        ]),
        [
          ['agent-l1', w1.sessionId, 'gw-test', 'test', 'test', 'anonymous', 'grpc', ['list-a', 'list-b'], [], []],
          ['agent-l2', w2.sessionId, 'gw-test', 'test', 'test', 'anonymous', 'grpc', ['list-c'], ['list-a'], []],
        ],
      );
      assert.ok(agents[0]!.connectedTime && agents[0]!.lastSeenTime);
      const connectedMs = Number(agents[0]!.connectedTime!.seconds) * 1000;
      assert.ok(Math.abs(connectedMs - Date.now()) < 60_000);

      const one = await client.listAgents({ agentId: 'agent-l2' });
      assert.deepEqual(
        one.agents.map((a) => a.sessionId),
        [w2.sessionId],
      );
      assert.deepEqual((await client.listAgents({ agentId: 'agent-gone' })).agents, []);

      // Connect JSON over HTTP/1.1 too.
      const json = await fetch(`${t.gateway.httpUrl}/outpost.api.v1.AccountService/ListAgents`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ agentId: 'agent-l1' }),
      });
      assert.equal(json.status, 200);
      const body = (await json.json()) as { agents: { agentId: string; transport: string; caching: string[] }[] };
      assert.deepEqual(
        body.agents.map((a) => [a.agentId, a.transport, a.caching]),
        [['agent-l1', 'grpc', ['list-a', 'list-b']]],
      );

      const list = await rest('/armory/agents');
      assert.equal(list.status, 200);
      const items = JSON.parse(list.text) as Record<string, unknown>[];
      assert.deepEqual(
        items.map((a) => [a.agentId, a.sessionId, a.gatewayId, a.transport, a.caching, a.standby, a.accounts]),
        [
          ['agent-l1', w1.sessionId, 'gw-test', 'grpc', ['list-a', 'list-b'], [], ['list-a', 'list-b']],
          ['agent-l2', w2.sessionId, 'gw-test', 'grpc', ['list-c'], ['list-a'], ['list-a', 'list-c']],
        ],
      );
      for (const a of items) {
        assert.ok(!Number.isNaN(Date.parse(String(a.lastConnection))) && a.lastConnection === a.connectedTime);
        assert.ok(!Number.isNaN(Date.parse(String(a.lastSeen))));
      }
      const byId = await rest('/armory/agents/agent-l2');
      assert.equal(byId.status, 200);
      assert.equal(JSON.parse(byId.text).sessionId, w2.sessionId);
      assert.equal(JSON.parse(byId.text).transport, 'grpc');

      // Neither the token nor its hash appears anywhere.
      const hashes = (await t.query<{ token_hash: string }>(`select token_hash from agent_sessions`)).map((r) => r.token_hash);
      const everything = [
        list.text,
        byId.text,
        JSON.stringify(body),
        JSON.stringify(agents, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
      ].join('\n');
      for (const secret of [...hashes, w1.sessionToken, w2.sessionToken]) assert.equal(everything.includes(secret), false);
      assert.equal(/token/i.test(list.text), false);

      first.end();
      second.end();
      await Promise.all([first.ended, second.ended]);
      await eventually('no agent listed', async () => (await client.listAgents({})).agents.length === 0);
    });

    test('GET /armory/agents/{id} of an unknown agent → 404 JSON; other methods → 405', async () => {
      const missing = await rest('/armory/agents/nobody');
      assert.equal(missing.status, 404);
      assert.deepEqual(JSON.parse(missing.text), { error: 'not_found', message: 'no connected agent "nobody"' });
      const post = await fetch(`${t.gateway.httpUrl}/armory/agents`, { method: 'POST', body: '{}' });
      assert.equal(post.status, 405);
      assert.equal(((await post.json()) as { error: string }).error, 'method_not_allowed');
      const long = await rest(`/armory/agents/${'x'.repeat(300)}`);
      assert.equal(long.status, 400);
    });
  });
}
