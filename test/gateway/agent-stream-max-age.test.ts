/**
 * Maximum stream age over real HTTP/2 streams: the gateway ends an agent stream after `agents.maxStreamAgeSeconds`
 * ±10% with UNAVAILABLE and the `x-outpost-reconnect: now` trailer; the agent's next Hello resumes the session, the
 * Welcome offers the stored resume points (no re-list needed) and the account is ACTIVE again. The jitter spreads
 * the ends over ±10%.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { jitteredMaxAgeMs, RECONNECT_HEADER, RECONNECT_NOW, STREAM_MAX_AGE } from '../../src/gateway/agents/stream-timers.js';
import { testDrivers } from '../../testkit/databases.js';
import {
  Code,
  configMap,
  connectAgent,
  event,
  events,
  EventType,
  hello,
  openAgentStream,
  SyncPhase,
  syncMarker,
  type TestAgentStream,
} from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

// Long enough for a stream to be set up (Hello, a list, its ack) well before 90% of it on a loaded machine, and for
// the ±10% jitter window to be wider than the event-loop stalls that could make streams seem to end together.
const MAX_AGE = 3;

test('the maximum age is jittered uniformly within ±10%', () => {
  assert.equal(
    jitteredMaxAgeMs(7200, () => 0),
    6480_000,
  );
  assert.equal(
    jitteredMaxAgeMs(7200, () => 0.5),
    7200_000,
  );
  assert.equal(
    jitteredMaxAgeMs(7200, () => 0.999999),
    7919_999,
  );
  const ages = Array.from({ length: 200 }, () => jitteredMaxAgeMs(100));
  assert.ok(ages.every((a) => a >= 90_000 && a <= 110_000));
  assert.ok(new Set(ages).size > 150, 'ages are spread, not one value');
});

for (const driver of testDrivers()) {
  describe(`agent stream maximum age (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, { agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 30, maxStreamAgeSeconds: MAX_AGE } });
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
    const state = async (name: string) => (await t.query<{ state: string }>(`select state from accounts where name = '${name}'`))[0]?.state;

    test('a stream ends UNAVAILABLE with the reconnect trailer at its jittered age; the resumed session gets its resume points', async () => {
      const first = open();
      const opened = Date.now();
      const w1 = await connectAgent(first, 'agent-age', [{ name: 'aged' }]);
      first.send(syncMarker(1, 'aged', SyncPhase.START));
      first.send(events(2, [event('aged', EventType.ADDED, configMap('a', 10))]));
      first.send(syncMarker(3, 'aged', SyncPhase.END, '10', 1));
      await first.waitForAck(3);
      assert.equal(await state('aged'), 'ACTIVE');

      const err = await first.ended;
      const age = Date.now() - opened;
      assert.ok(err, 'the stream must end with an error the agent can read');
      assert.equal(err.code, Code.Unavailable);
      assert.equal(err.rawMessage, STREAM_MAX_AGE);
      assert.equal(err.metadata.get(RECONNECT_HEADER), RECONNECT_NOW);
      assert.ok(age >= MAX_AGE * 900 - 50, `ended after ${age} ms, before 90% of the maximum age`);
      // No upper bound: timers fire late on a loaded machine (the jitter's range is checked above, on the function).

      const second = open();
      second.send(hello('agent-age', [{ name: 'aged' }], { resumeSessionId: w1.sessionId, resumeSessionToken: w1.sessionToken }));
      const res = await second.next();
      assert.equal(res.message.case, 'welcome');
      const w2 = res.message.case === 'welcome' ? res.message.value : undefined;
      const verdict = w2!.accounts.find((a) => a.account === 'aged')!;
      assert.equal(verdict.verdict, Verdict.CACHING);
      assert.deepEqual(
        verdict.resume.map((r) => [r.kind, r.resourceVersion]),
        [['ConfigMap', '10']],
        'the stored resume point is offered: the agent watches on without listing again',
      );
      await eventually('account aged ACTIVE', async () => (await state('aged')) === 'ACTIVE');
      // The new stream has its own age: it ends too.
      const again = await second.ended;
      assert.equal(again?.metadata.get(RECONNECT_HEADER), RECONNECT_NOW);
    });

    test('streams opened together end spread over the jitter window', async () => {
      const opened = Date.now();
      const all = Array.from({ length: 6 }, () => open());
      await Promise.all(all.map((s, i) => connectAgent(s, `agent-spread-${i}`, [{ name: `spread-${i}` }])));
      const ends = await Promise.all(all.map((s) => s.ended.then(() => Date.now() - opened)));
      assert.ok(Math.max(...ends) - Math.min(...ends) >= 10, `all ended within ${Math.max(...ends) - Math.min(...ends)} ms`);
    });
  });
}
