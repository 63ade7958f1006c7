/**
 * The gateway's dead-peer check: an agent that says nothing for `agents.deadAfterSeconds` has its stream closed
 * DEADLINE_EXCEEDED (and its accounts released), on time; an agent that keeps sending heartbeats is kept however long
 * it stays.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Code, connectAgent, openAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

describe('dead agents are noticed', () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite', { agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 0.8 } });
  });
  after(async () => {
    await t?.close();
  });

  test('a silent agent is closed DEADLINE_EXCEEDED after deadAfterSeconds; one sending heartbeats stays', async () => {
    const silent = openAgentStream(t.gateway.grpcUrl);
    const alive = openAgentStream(t.gateway.grpcUrl);
    await connectAgent(silent, 'agent-silent', [{ name: 'silent' }]);
    await connectAgent(alive, 'agent-alive', [{ name: 'alive' }]);
    const beat = setInterval(
      () => alive.send({ case: 'heartbeat', value: { agentId: 'agent-alive', sentAtUnixMs: BigInt(Date.now()) } }),
      200,
    );
    try {
      const started = Date.now();
      const err = await silent.ended;
      const after = Date.now() - started;
      assert.equal(err?.code, Code.DeadlineExceeded, `got ${err?.message}`);
      assert.match(err!.rawMessage, /no message from the agent for 0\.8s/);
      assert.ok(after >= 600 && after < 3000, `closed after ${after} ms`);
      await eventually(
        'account silent INACTIVE',
        async () => (await t.query<{ state: string }>(`select state from accounts where name = 'silent'`))[0]?.state === 'INACTIVE',
      );
      await new Promise((r) => setTimeout(r, 2000));
      assert.equal(alive.received.filter((m) => m.message.case === 'heartbeat').length > 5, true, 'the gateway kept sending heartbeats');
      const [row] = await t.query<{ state: string }>(`select state from accounts where name = 'alive'`);
      assert.equal(row?.state, 'ACTIVE', 'the agent sending heartbeats kept its stream');
    } finally {
      clearInterval(beat);
      alive.end();
      await alive.ended;
    }
  });
});
