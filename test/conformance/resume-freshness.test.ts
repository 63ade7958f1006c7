/**
 * Page sections 4 and 5 on the age of resume points: a scope's resume point is offered only while its last list END,
 * event or bookmark is younger than the resume age (`cache.resumeMaxAgeSeconds` in the gateway's configuration; the
 * page calls it `agents.resumeMaxAgeSeconds`), here 2 s. A quiet scope goes stale and is listed again; one whose
 * watch forwards bookmarks stays fresh. Both cases run side by side.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Welcome } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { startTestGateway } from '../../testkit/test-gateway.js';
import { helloAndWelcome, openAgentStream, type AgentStream } from './agent-stream.js';
import { helloFor, type TestGateway } from './harness.js';
import { added, batch, bookmark, cm, marker, SyncPhase } from './scripted.js';

const RESUME_MAX_AGE_S = 2;
/** How long both cases stay without a change: well past the resume age. */
const QUIET_MS = RESUME_MAX_AGE_S * 1000 + 1500;

describe('resume points age out unless bookmarks keep them fresh (sections 4, 5)', { concurrency: true }, () => {
  let t: TestGateway;
  const open: AgentStream[] = [];
  before(async () => {
    t = await startTestGateway('pglite', {
      agents: { heartbeatIntervalSeconds: 0.5, deadAfterSeconds: 20 },
      cache: { resumeMaxAgeSeconds: RESUME_MAX_AGE_S },
    });
  });
  after(async () => {
    for (const s of open) s.abort();
    await t?.close();
  });
  const connect = async (agentId: string, account: string): Promise<[AgentStream, Welcome]> => {
    const s = openAgentStream(t.gateway.grpcUrl);
    open.push(s);
    const w = await helloAndWelcome(s, helloFor(agentId, [account]));
    s.keepAlive(agentId);
    return [s, w];
  };
  const listOnce = async (s: AgentStream, account: string) => {
    s.send(marker(1, account, SyncPhase.START));
    s.send(batch(2, [added(account, cm('a', '10'))]));
    s.send(marker(3, account, SyncPhase.END, '10', 1));
    await s.waitForAck(3);
  };

  test('a quiet scope without bookmarks goes stale: the next connection gets no resume point and lists again', async () => {
    const [s] = await connect('agent-quiet', 'conf-quiet');
    await listOnce(s, 'conf-quiet');
    await new Promise((r) => setTimeout(r, QUIET_MS));
    s.end();
    await s.ended;
    const [s2, w2] = await connect('agent-quiet', 'conf-quiet');
    assert.deepEqual(w2.accounts[0]!.resume, [], 'stale: not offered');
    s2.end();
    await s2.ended;
  });

  test('bookmarks keep a scope fresh: after the same quiet time its resume point is the last bookmark', async () => {
    const [s] = await connect('agent-fresh', 'conf-fresh');
    await listOnce(s, 'conf-fresh');
    let seq = 4;
    let rv = 10;
    const started = Date.now();
    while (Date.now() - started < QUIET_MS) {
      s.send(batch(seq, [bookmark('conf-fresh', String(++rv))]));
      await s.waitForAck(seq++);
      await new Promise((r) => setTimeout(r, 250));
    }
    s.end();
    await s.ended;
    const [s2, w2] = await connect('agent-fresh', 'conf-fresh');
    assert.deepEqual(
      w2.accounts[0]!.resume.map((p) => [p.kind, p.resourceVersion]),
      [['ConfigMap', String(rv)]],
      'fresh: offered at the last bookmark',
    );
    s2.end();
    await s2.ended;
  });
});
