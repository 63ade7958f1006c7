/**
 * The gateway's dead-peer check: an agent that says nothing for `agents.deadAfterSeconds` has its stream closed
 * DEADLINE_EXCEEDED (and its accounts released), not before; an agent that keeps sending heartbeats is kept however
 * long it stays.
 *
 * Under load timers fire late, so there is no upper bound on when the silent stream closes (only a hang bound), and
 * deadAfterSeconds is ten heartbeats of the live agent, so a stalled event loop does not make it look dead.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Code, connectAgent, openAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

describe('dead agents are noticed', () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite', { agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 2 } });
  });
  after(async () => {
    await t?.close();
  });

  test('a silent agent is closed DEADLINE_EXCEEDED after deadAfterSeconds; one sending heartbeats stays', async () => {
    const silent = openAgentStream(t.gateway.grpcUrl);
    const alive = openAgentStream(t.gateway.grpcUrl);
    // The silent agent's last message (its Hello) is sent after this: its silence lasts at least until it is closed.
    const beforeHello = Date.now();
    await connectAgent(silent, 'agent-silent', [{ name: 'silent' }]);
    await connectAgent(alive, 'agent-alive', [{ name: 'alive' }]);
    const beat = setInterval(
      () => alive.send({ case: 'heartbeat', value: { agentId: 'agent-alive', sentAtUnixMs: BigInt(Date.now()) } }),
      200,
    );
    try {
      const hang = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the silent stream was not closed within 30 s')), 30_000).unref(),
      );
      const err = await Promise.race([silent.ended, hang]);
      const silentFor = Date.now() - beforeHello;
      assert.equal(err?.code, Code.DeadlineExceeded, `got ${err?.message}`);
      assert.match(err!.rawMessage, /no message from the agent for 2s/);
      assert.ok(silentFor >= 2000, `closed after ${silentFor} ms of silence, before deadAfterSeconds`);
      await eventually(
        'account silent INACTIVE',
        async () => (await t.query<{ state: string }>(`select state from accounts where name = 'silent'`))[0]?.state === 'INACTIVE',
      );
      // Longer than deadAfterSeconds again: the live agent outlived the silent one's limit twice over.
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
