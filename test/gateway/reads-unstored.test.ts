/**
 * Reads write nothing (read-runner.ts): a `get`, `list`, `logs` or `history` submitted through OperationService runs
 * on the agent and is answered once it ended — whatever `wait` says — without an operation row, checked and scrubbed
 * as a stored result is; it fails when its stream ends first, times out at its deadline, fails without an agent, and
 * is audited only with `audit.reads`. A stored operation next to them is unchanged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RolloutAction } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { eventually } from '../../testkit/eventually.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { callJson, okResult, startHeldAgent, startOperationAgent, type OperationAgent } from './operations-helpers.js';

const cm = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cm' };

for (const driver of testDrivers()) {
  describe(`reads write nothing (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let audited: TestGateway;
    let agent: OperationAgent;
    let held: OperationAgent;
    const release = new Map<string, () => void>();
    const count = async (gw = t) => Number((await gw.query<{ n: string }>('select count(*) as n from operations'))[0]!.n);
    const submit = (body: Record<string, unknown>, gw = t) => callJson(gw.gateway.httpUrl, 'SubmitOperation', body);
    const auditVerbs = async (gw: TestGateway) =>
      (
        await gw.query<{ verb: string; operation_id: string; status: number }>(
          `select verb, operation_id, status from audit_entries where kind = 'operation' order by started_at, id`,
        )
      ).map((r) => `${r.verb}:${r.operation_id}:${r.status}`);
    const metric = async (gw: TestGateway, line: RegExp) => {
      const text = await (await fetch(`${gw.gateway.httpUrl}/metrics`)).text();
      return Number(
        text
          .split('\n')
          .find((l) => line.test(l))
          ?.split(' ')
          .at(-1) ?? 0,
      );
    };

    before(async () => {
      t = await startTestGateway(driver, { operations: { agentWaitSeconds: 1, sweepIntervalMs: 100 } });
      audited = await startTestGateway(driver, { audit: { reads: true } });
      const answer = (op: Parameters<typeof okResult>[0]) => {
        const spec = op.spec;
        if (spec.case === 'get' && spec.value.name === 'missing')
          return {
            id: op.id,
            account: op.account,
            success: false,
            statusCode: 404,
            reason: 'NotFound',
            message: 'configmaps "missing" not found',
          };
        if (spec.case === 'get' && spec.value.name === 'twice')
          return { ...okResult(op), objects: [...okResult(op).objects!, ...okResult(op).objects!] };
        if (spec.case === 'list' && spec.value.kind === 'Secret')
          return {
            ...okResult(op),
            objects: [
              { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, data: { password: 'aHVudGVyMg==' } },
            ],
          };
        return okResult(op);
      };
      agent = await startOperationAgent(t.gateway.grpcUrl, 'agent-reads', ['reads-a', 'reads-idle'], { answer });
      await startOperationAgent(audited.gateway.grpcUrl, 'agent-audited', ['reads-audited'], { answer });
      held = await startHeldAgent(t.gateway.grpcUrl, 'agent-held', ['reads-held'], release);
    });
    after(async () => {
      for (const r of release.values()) r();
      await agent?.close();
      await held?.close();
      await t?.close();
      await audited?.close();
    });

    test('get, list, logs and history: answered at once with their result, never stored, unknown to GetOperation', async () => {
      const before = await count();
      const specs: Record<string, unknown>[] = [
        { get: cm },
        { list: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default' } },
        { logs: { namespace: 'default', pod: 'web-1' } },
        { history: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' } },
      ];
      for (const spec of specs) {
        const type = Object.keys(spec)[0]!;
        const res = await submit({ account: 'reads-a', wait: false, ...spec });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const record = res.body.operation;
        assert.equal(record.state, 'OPERATION_STATE_SUCCEEDED', `${type}: ${JSON.stringify(record)}`);
        assert.equal(record.type, type);
        assert.equal(record.storedAt, undefined, 'a read is never stored');
        assert.ok(record.receivedAt && record.sentAt && record.resultAt && record.totalDuration);
        assert.equal(record.agentId, 'agent-reads');
        assert.equal(record.gatewayId, 'gw-test');
        assert.match(record.id, /^read-[0-9a-f-]{36}$/);
        assert.equal(agent.received.at(-1)!.id, record.id, 'the agent ran it under the id the caller sees');
        assert.equal((await callJson(t.gateway.httpUrl, 'GetOperation', { id: record.id })).body.code, 'not_found');
      }
      // A client-chosen id is the caller's; the agent gets a fresh one (it keeps results by id: a reused id must not
      // answer an older read), so the same id reads again.
      for (let i = 0; i < 2; i++) {
        const mine = await submit({ account: 'reads-a', id: 'my-read', get: cm });
        assert.equal(mine.body.operation.id, 'my-read');
        assert.equal(mine.body.operation.state, 'OPERATION_STATE_SUCCEEDED');
        assert.match(agent.received.at(-1)!.id, /^read-/);
      }
      assert.equal(await count(), before, 'no operation row');
      assert.equal(await metric(t, /^outpost_gateway_reads_total\{type="get",via="local",state="SUCCEEDED"\}/), 3);
    });

    test("the cluster's refusal, a result breaking its type's rules and Secret data: as for stored results", async () => {
      const missing = (await submit({ account: 'reads-a', get: { ...cm, name: 'missing' } })).body.operation;
      assert.equal(missing.state, 'OPERATION_STATE_FAILED');
      assert.equal(missing.result.reason, 'NotFound');
      assert.equal(missing.result.statusCode, 404);
      const twice = (await submit({ account: 'reads-a', get: { ...cm, name: 'twice' } })).body.operation;
      assert.equal(twice.state, 'OPERATION_STATE_FAILED');
      assert.equal(twice.result.reason, 'InvalidResult');
      const secrets = (await submit({ account: 'reads-a', list: { apiVersion: 'v1', kind: 'Secret', namespace: 'default' } })).body
        .operation;
      assert.equal(secrets.state, 'OPERATION_STATE_SUCCEEDED');
      assert.equal(secrets.result.objects.length, 1);
      assert.equal(secrets.result.objects[0].data, undefined, 'Secret data removed by the gateway');
      assert.doesNotMatch(JSON.stringify(secrets), /aHVudGVyMg==/);
    });

    test('no agent for a known account: FAILED at once; an unknown account: NOT_FOUND; nothing stored', async () => {
      const before = await count();
      await agent.cut();
      try {
        const none = (await submit({ account: 'reads-idle', get: cm })).body.operation;
        assert.equal(none.state, 'OPERATION_STATE_FAILED');
        assert.match(none.error, /no agent connected for account reads-idle/);
      } finally {
        await agent.reconnect();
      }
      const unknown = await submit({ account: 'nobody', get: cm });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'not_found');
      assert.equal(await count(), before);
      assert.equal(await metric(t, /^outpost_gateway_reads_total\{type="get",via="unserved",state="FAILED"\}/), 1);
    });

    test('a read past its time is TIMED_OUT; one whose stream ends is sent again, on the next stream or FAILED without one; late results are dropped quietly', async () => {
      const slow = (await submit({ account: 'reads-held', get: cm, timeout: '1s' })).body.operation;
      assert.equal(slow.state, 'OPERATION_STATE_TIMED_OUT');
      assert.match(slow.error, /^read timed out after 1s waiting for the result from agent agent-held$/);

      // The stream ends under a read and the agent comes back: the read is sent again (a new id) and answered there.
      const pending = submit({ account: 'reads-held', get: cm });
      await eventually('the second read at the agent', () => held.received.length === 2);
      await held.cut();
      await held.reconnect();
      await eventually('the read sent again on the new stream', () => held.received.length === 3);
      const [first, second, again] = held.received.map((o) => o.id);
      assert.notEqual(again, second);
      release.get(again!)!();
      const resent = (await pending).body.operation;
      assert.equal(resent.state, 'OPERATION_STATE_SUCCEEDED', JSON.stringify(resent));
      assert.equal(resent.id, again, 'the record is the try that answered');

      // The stream ends and no agent comes back within operations.agentWaitSeconds (1 s here): FAILED, saying why.
      const lost = submit({ account: 'reads-held', get: cm });
      await eventually('the fourth read at the agent', () => held.received.length === 4);
      await held.cut();
      const failed = (await lost).body.operation;
      assert.equal(failed.state, 'OPERATION_STATE_FAILED');
      assert.match(failed.error, /stream ended before the read's result came/);
      await held.reconnect();

      // The answers of the reads that ended come now (one through the agent's outbox): none is an unknown operation.
      for (const id of [first!, second!, held.received[3]!.id]) release.get(id)!();
      const stored = await submit({
        account: 'reads-held',
        rollout: { kind: 'Deployment', namespace: 'default', name: 'web', action: RolloutAction.RESTART },
      });
      await held.waitReceived(stored.body.operation.id);
      release.get(stored.body.operation.id)!();
      await eventually(
        'the stored operation SUCCEEDED',
        async () =>
          (await callJson(t.gateway.httpUrl, 'GetOperation', { id: stored.body.operation.id })).body.operation.state ===
          'OPERATION_STATE_SUCCEEDED',
      );
      assert.equal(await metric(t, /^outpost_gateway_operation_results_ignored_total\{reason="unknown_operation"\}/), 0);
    });

    test('audit.reads: off, reads leave no audit entry; on, each is recorded like a submission', async () => {
      const stored = await submit({
        account: 'reads-a',
        rollout: { kind: 'Deployment', namespace: 'default', name: 'web', action: RolloutAction.RESTART },
        wait: true,
      });
      // The audit log writes in order: once the stored operation's entry is there, the reads' would be too.
      await eventually('the rollout audited', async () => (await auditVerbs(t)).includes(`rollout:${stored.body.operation.id}:200`));
      // Only the read refused before it ran (an unknown account) is there: refusals are recorded whatever audit.reads says.
      assert.deepEqual(
        (await auditVerbs(t)).filter((v) => !v.startsWith('rollout:')),
        ['get::404'],
      );

      const read = (await submit({ account: 'reads-audited', get: cm }, audited)).body.operation;
      assert.equal(read.state, 'OPERATION_STATE_SUCCEEDED');
      await eventually('the read audited', async () => (await auditVerbs(audited)).length > 0);
      assert.deepEqual(await auditVerbs(audited), [`get:${read.id}:200`]);
      assert.equal(await count(audited), 0);
    });
  });
}
