/**
 * Page section 6 (heartbeats, maximum age, reconnecting) and rows E20–E23 on one gateway with short timers
 * (heartbeats every 0.5 s, dead after 3 s, streams at most 10 s old): a silent agent is dropped, a heartbeating one is
 * not; streams end UNAVAILABLE with `x-outpost-reconnect: now` at their maximum age and when the gateway shuts down; a
 * database failure ends the stream INTERNAL without detail. Both agents — the mini agent and Outpost's own — reconnect
 * at once after the trailer and resume their session without listing again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { startTestGateway } from '../../testkit/test-gateway.js';
import { helloAndWelcome, openAgentStream, type AgentStream } from './agent-stream.js';
import { startH2Recorder } from './h2-recorder.js';
import { helloFor, startReferenceAgent, startScenarioCluster, type TestGateway } from './harness.js';
import { createMiniAgent } from './mini-agent.js';
import { added, batch, cm } from './scripted.js';
import { rowTest } from './status-cases.js';
import { checkTranscript } from './transcript-rules.js';
import { eventually } from '../../testkit/eventually.js';

// A heartbeating stream must go DEAD_AFTER_S without a heartbeat of the test's to be dropped: 3 s, so a test process
// starved by a loaded machine does not drop it. MAX_AGE_S is well past it: E20's heartbeating stream must still be up
// when the silent one ends, however late the dead check runs.
const DEAD_AFTER_S = 3;
const MAX_AGE_S = 10;

describe('heartbeats, maximum age, shutdown and database failures (sections 6, 9)', { concurrency: false }, () => {
  let t: TestGateway;
  const open: AgentStream[] = [];
  before(async () => {
    t = await startTestGateway('pglite', {
      agents: { heartbeatIntervalSeconds: 0.5, deadAfterSeconds: DEAD_AFTER_S, maxStreamAgeSeconds: MAX_AGE_S },
    });
  });
  after(async () => {
    for (const s of open) s.abort();
    await t?.close().catch(() => {});
  });
  /** A welcomed stream that heartbeats every 300 ms unless `silent`. */
  const connect = async (agentId: string, account: string, silent = false) => {
    const s = openAgentStream(t.gateway.grpcUrl);
    open.push(s);
    const w = await helloAndWelcome(s, helloFor(agentId, [account]));
    assert.equal(w.accounts[0]!.verdict, Verdict.CACHING);
    if (!silent) s.keepAlive(agentId);
    return s;
  };
  const endOf = async (s: AgentStream, ms = 30_000) => {
    const o = await Promise.race([s.ended, new Promise<'alive'>((r) => setTimeout(() => r('alive'), ms).unref())]);
    if (o === 'alive') assert.fail(`the stream did not end within ${ms} ms`);
    return o;
  };

  describe('timers (concurrently: each stream has its own clock)', { concurrency: true }, () => {
    rowTest('E20', 'nothing from the agent for agents.deadAfterSeconds; a stream that heartbeats lives on', async (expect) => {
      const alive = await connect('agent-alive', 'conf-alive');
      const opened = Date.now();
      const silent = await connect('agent-silent', 'conf-silent', true);
      const o = await endOf(silent);
      assert.ok(Date.now() - opened >= DEAD_AFTER_S * 1000 - 100, 'not before deadAfterSeconds');
      expect(o);
      assert.equal(alive.finished, false, 'the heartbeating stream is still up');
      alive.end();
    });

    rowTest('E21', 'the stream reached agents.maxStreamAgeSeconds (±10%)', async (expect) => {
      const opened = Date.now();
      const s = await connect('agent-old', 'conf-old');
      const o = await endOf(s);
      assert.ok(Date.now() - opened >= MAX_AGE_S * 900 - 100, 'not before 90% of the maximum age');
      expect(o);
    });

    for (const kind of ['mini', 'reference'] as const) {
      test(`the ${kind} agent reconnects at once after x-outpost-reconnect: now and resumes its session without listing again`, async () => {
        const cluster = await startScenarioCluster(20);
        const recorder = await startH2Recorder(t.gateway.grpcUrl);
        const account = `conf-age-${kind}`;
        const stop =
          kind === 'mini'
            ? await (async () => {
                const agent = createMiniAgent({
                  grpcUrl: recorder.url,
                  agentId: `${kind}-age`,
                  accounts: [{ name: account, kube: cluster.kube, kinds: [{ apiVersion: 'v1', kind: 'ConfigMap' }] }],
                });
                await agent.start();
                return () => agent.close();
              })()
            : await (async () => {
                const agent = await startReferenceAgent(cluster, recorder.address, { id: `${kind}-age`, account, kinds: ['ConfigMap'] });
                return () => agent.close();
              })();
        try {
          const welcomed = () =>
            recorder.streams.filter((s) => s.entries.some((e) => e.dir === 'gateway' && e.message.message.case === 'welcome'));
          await eventually('a second welcomed stream', () => welcomed().length >= 2, { timeoutMs: 30_000 });
          const [first, second] = welcomed();
          assert.equal(first!.grpcStatus, 14, 'the first stream ended UNAVAILABLE');
          assert.equal(first!.trailers['x-outpost-reconnect'], 'now');
          const w1 = first!.entries.find((e) => e.dir === 'gateway' && e.message.message.case === 'welcome')!.message.message.value as {
            sessionId: string;
            sessionToken: string;
          };
          const hello = second!.entries.find((e) => e.dir === 'agent')!.message.message;
          assert.equal(hello.case, 'hello');
          assert.equal(hello.case === 'hello' && hello.value.resumeSessionId, w1.sessionId, 'the next Hello resumes the session');
          assert.equal(hello.case === 'hello' && hello.value.resumeSessionToken, w1.sessionToken);
          const { violations, summary } = checkTranscript([first!, second!], { resumeWithoutList: true });
          assert.deepEqual(violations, []);
          if (summary.offered[1]!.length > 0) assert.deepEqual(summary.listed[1], [], 'scopes with a resume point are not listed again');
        } finally {
          await stop();
          await recorder.close();
          await cluster.close();
        }
      });
    }
  });

  rowTest('E23', "the gateway's database failed: no detail is sent", async (expect) => {
    const s = await connect('agent-db', 'conf-db');
    s.send(batch(1, [added('conf-db', cm('before', '1'))]));
    await s.waitForAck(1);
    await t.query('alter table watch_states rename to watch_states_away');
    try {
      s.send(batch(2, [added('conf-db', cm('during', '2'))]));
      const o = await endOf(s);
      expect(o);
      assert.doesNotMatch(o.grpcMessage, /sql|select|insert|update|relation|table|column|postgres|pglite/i, 'no detail');
    } finally {
      await t.query('alter table watch_states_away rename to watch_states');
    }
  });

  rowTest('E22', 'the gateway is shutting down', async (expect) => {
    const s = await connect('agent-shutdown', 'conf-shutdown');
    const closing = t.gateway.close();
    const o = await endOf(s);
    await closing;
    expect(o);
  });
});
