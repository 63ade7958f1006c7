/**
 * OperationService and the REST reads over real sockets: validation errors (nothing stored), WaitOperation as a
 * Connect JSON stream over HTTP/1.1 (fetch, enveloped messages) and over gRPC, ListOperations paging and filters,
 * `GET /armory/agent/operations[/{id}]`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { RolloutAction } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { Code, type ConnectError } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { callJson, okResult, startHeldAgent, startOperationAgent, type OperationAgent } from './operations-helpers.js';

const getJson = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cm' };
/** A stored operation (reads are not stored): a rollout restart. */
const rolloutJson = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web', action: RolloutAction.RESTART };
const rolloutSpec = { case: 'rollout' as const, value: rolloutJson };

/** Reads Connect streaming envelopes from a fetch body as they arrive. */
function envelopes(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  let buf = Buffer.alloc(0);
  return async (): Promise<{ flags: number; json: any } | undefined> => {
    for (;;) {
      if (buf.length >= 5) {
        const len = buf.readUInt32BE(1);
        if (buf.length >= 5 + len) {
          const env = { flags: buf[0]!, json: JSON.parse(buf.subarray(5, 5 + len).toString('utf8')) };
          buf = buf.subarray(5 + len);
          return env;
        }
      }
      const { done, value } = await reader.read();
      if (done) return undefined;
      buf = Buffer.concat([buf, value]);
    }
  };
}

function envelope(json: unknown): Blob {
  const payload = new TextEncoder().encode(JSON.stringify(json));
  const out = new Uint8Array(5 + payload.length);
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return new Blob([out]);
}

for (const driver of testDrivers()) {
  describe(`operation API (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let client: Client<typeof OperationService>;
    let agent: OperationAgent;
    let held: OperationAgent;
    const release = new Map<string, () => void>();
    before(async () => {
      t = await startTestGateway(driver, { operations: { agentWaitSeconds: 1, sweepIntervalMs: 100 } });
      client = createClient(OperationService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
      agent = await startOperationAgent(t.gateway.grpcUrl, 'agent-api', ['api-a', 'api-b'], {
        answer: (op) =>
          (op.spec.case === 'get' || op.spec.case === 'rollout') && op.spec.value.name === 'missing'
            ? { id: op.id, account: op.account, success: false, statusCode: 404, reason: 'NotFound', message: 'not found' }
            : okResult(op),
      });
      held = await startHeldAgent(t.gateway.grpcUrl, 'agent-held', ['api-held'], release);
    });
    after(async () => {
      for (const r of release.values()) r();
      await agent?.close();
      await held?.close();
      await t?.close();
    });
    const count = async () => Number((await t.query<{ n: string }>('select count(*) as n from operations'))[0]!.n);

    test('bad input → INVALID_ARGUMENT (HTTP 400) with a clear message, nothing stored', async () => {
      const before = await count();
      const cases: [unknown, RegExp][] = [
        [{ account: 'api-a' }, /an operation is required: set exactly one of apply, delete, scale/],
        [{ account: 'api-a', frobnicate: {} }, /key "frobnicate" is unknown/],
        [{ get: getJson }, /account is required/],
        [{ account: 'api-a', apply: { manifests: '  \n' } }, /apply.manifests is empty/],
        [
          { account: 'api-a', apply: { manifests: 'x'.repeat(1024 * 1024 + 1) } },
          /apply.manifests is 1048577 bytes; the limit is 1048576 bytes/,
        ],
        [{ account: 'api-a', get: getJson, timeout: '0s' }, /timeout must be greater than 0 \(got 0s\)/],
        [{ account: 'api-a', get: getJson, timeout: '-1s' }, /timeout must be greater than 0/],
        [{ account: 'api-a', get: getJson, timeout: '3601s' }, /timeout must be at most 1h \(got 3601s\)/],
        [{ account: 'api-a', get: getJson, id: 'has space' }, /id must be 1–128 characters/],
        [{ account: 'api-a', get: getJson, id: 'x'.repeat(129) }, /id must be 1–128 characters/],
        [{ account: 'nobody', get: getJson, timeout: '0s' }, /timeout must be greater than 0/],
      ];
      for (const [body, message] of cases) {
        const res = await callJson(t.gateway.httpUrl, 'SubmitOperation', body);
        assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
        assert.equal(res.body.code, 'invalid_argument');
        assert.match(res.body.message, message);
      }
      const getBad = await callJson(t.gateway.httpUrl, 'GetOperation', { id: 'a/b' });
      assert.equal(getBad.status, 400);
      assert.equal((await callJson(t.gateway.httpUrl, 'GetOperation', { id: 'nope' })).body.code, 'not_found');
      assert.equal((await callJson(t.gateway.httpUrl, 'SubmitOperation', { account: 'nobody', get: getJson })).body.code, 'not_found');
      assert.equal(await count(), before);
      // The limit is inclusive, and a 1 h timeout is allowed.
      const ok = await callJson(t.gateway.httpUrl, 'SubmitOperation', { account: 'api-a', get: getJson, timeout: '3600s', wait: true });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.operation.state, 'OPERATION_STATE_SUCCEEDED');
      assert.equal(ok.body.operation.operation.timeout, '3600s');
    });

    test('WaitOperation over Connect JSON streaming (HTTP/1.1 fetch): current record at once, then each change, then the end', async () => {
      const { operation } = await client.submitOperation({ account: 'api-held', spec: rolloutSpec });
      await held.waitReceived(operation!.id);
      const res = await fetch(`${t.gateway.httpUrl}/outpost.api.v1.OperationService/WaitOperation`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/connect+json' },
        body: envelope({ id: operation!.id }),
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/connect+json');
      const next = envelopes(res.body!);
      const first = await next();
      assert.equal(first!.flags, 0);
      assert.equal(first!.json.operation.state, 'OPERATION_STATE_SENT');
      release.get(operation!.id)!();
      const second = await next();
      assert.equal(second!.json.operation.state, 'OPERATION_STATE_SUCCEEDED');
      assert.equal(second!.json.operation.result.statusCode, 200);
      assert.ok(second!.json.operation.totalDuration);
      const end = await next();
      assert.equal(end!.flags & 0x02, 0x02);
      assert.deepEqual(end!.json, {});
      assert.equal(await next(), undefined);

      const missing = await fetch(`${t.gateway.httpUrl}/outpost.api.v1.OperationService/WaitOperation`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/connect+json' },
        body: envelope({ id: 'no-such-op' }),
      });
      const endMissing = await envelopes(missing.body!)();
      assert.equal(endMissing!.flags & 0x02, 0x02);
      assert.equal(endMissing!.json.error.code, 'not_found');
    });

    test('WaitOperation over gRPC; a terminal operation yields once and ends', async () => {
      const { operation } = await client.submitOperation({ account: 'api-held', spec: rolloutSpec });
      await held.waitReceived(operation!.id);
      const states: OperationState[] = [];
      for await (const m of client.waitOperation({ id: operation!.id })) {
        states.push(m.operation!.state);
        if (states.length === 1) release.get(operation!.id)!();
      }
      assert.deepEqual(states, [OperationState.SENT, OperationState.SUCCEEDED]);
      const again: OperationState[] = [];
      for await (const m of client.waitOperation({ id: operation!.id })) again.push(m.operation!.state);
      assert.deepEqual(again, [OperationState.SUCCEEDED]);
      await assert.rejects(
        (async () => {
          for await (const _ of client.waitOperation({ id: 'bad id' })) void _;
        })(),
        (err: ConnectError) => err.code === Code.InvalidArgument,
      );
    });

    test('ListOperations: newest first, keyset pages, account and state filters', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const account = i % 2 === 0 ? 'api-a' : 'api-b';
        const name = i % 3 === 0 ? 'missing' : `cm-${i}`;
        const { operation } = await client.submitOperation({
          account,
          id: `list-${i}`,
          spec: { case: 'rollout', value: { ...rolloutJson, name } },
          wait: true,
        });
        ids.push(operation!.id);
      }
      const all: string[] = [];
      let token = '';
      do {
        const page = await client.listOperations({ pageSize: 3, pageToken: token });
        assert.ok(page.operations.length <= 3);
        all.push(...page.operations.map((o) => o.id));
        token = page.nextPageToken;
      } while (token);
      assert.equal(new Set(all).size, all.length, 'no duplicates across pages');
      assert.equal(all.length, await count());
      const listed = all.filter((id) => id.startsWith('list-'));
      assert.deepEqual(listed, [...ids].reverse());

      const a = await client.listOperations({ account: 'api-a', pageSize: 500 });
      assert.deepEqual(
        a.operations.map((o) => o.id).filter((id) => id.startsWith('list-')),
        ['list-6', 'list-4', 'list-2', 'list-0'],
      );
      assert.ok(a.operations.every((o) => o.account === 'api-a'));
      const failed = await client.listOperations({ state: OperationState.FAILED });
      assert.deepEqual(
        failed.operations.map((o) => o.id),
        ['list-6', 'list-3', 'list-0'],
      );
      const failedB = await client.listOperations({ state: OperationState.FAILED, account: 'api-b', pageSize: 1 });
      assert.deepEqual(
        failedB.operations.map((o) => o.id),
        ['list-3'],
      );
      assert.equal(failedB.nextPageToken, '');
      const first = await client.listOperations({ account: 'api-a', pageSize: 1 });
      await assert.rejects(
        client.listOperations({ account: 'api-b', pageSize: 1, pageToken: first.nextPageToken }),
        (err: ConnectError) => {
          return err.code === Code.InvalidArgument && /different filters/.test(err.rawMessage);
        },
      );
      await assert.rejects(client.listOperations({ pageSize: -1 }), (err: ConnectError) => err.code === Code.InvalidArgument);
      await assert.rejects(client.listOperations({ pageToken: 'garbage' }), (err: ConnectError) => err.code === Code.InvalidArgument);
      await assert.rejects(
        client.listOperations({ state: 42 as OperationState }),
        (err: ConnectError) => err.code === Code.InvalidArgument,
      );
    });

    test('REST: GET /armory/agent/operations?page&items and /armory/agent/operations/{id}', async () => {
      const total = await count();
      const get = async (path: string) => {
        const res = await fetch(`${t.gateway.httpUrl}${path}`);
        return { status: res.status, body: (await res.json()) as any };
      };
      const p1 = await get('/armory/agent/operations?page=1&items=2');
      assert.equal(p1.status, 200);
      assert.equal(p1.body.page, 1);
      assert.equal(p1.body.pageSize, 2);
      assert.equal(p1.body.total, total);
      assert.equal(p1.body.items.length, 2);
      const p2 = await get('/armory/agent/operations?page=2&items=2');
      assert.notEqual(p2.body.items[0].id, p1.body.items[1].id);
      const list = await client.listOperations({ pageSize: 4 });
      assert.deepEqual(
        [...p1.body.items, ...p2.body.items].map((o: any) => o.id),
        list.operations.map((o) => o.id),
      );
      const defaults = await get('/armory/agent/operations');
      assert.equal(defaults.body.pageSize, 50);
      assert.equal(defaults.body.items.length, Math.min(50, total));
      const beyond = await get(`/armory/agent/operations?page=${total + 1}&items=1`);
      assert.deepEqual(beyond.body.items, []);

      const one = await get('/armory/agent/operations/list-3');
      assert.equal(one.status, 200);
      assert.equal(one.body.id, 'list-3');
      assert.equal(one.body.state, 'OPERATION_STATE_FAILED');
      assert.equal(one.body.type, 'rollout');
      assert.equal(one.body.result.reason, 'NotFound');
      assert.equal(one.body.operation.rollout.name, 'missing');
      assert.ok(one.body.receivedAt && one.body.storedAt && one.body.sentAt && one.body.resultAt && one.body.totalDuration);

      const missing = await get('/armory/agent/operations/nope');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error, 'not_found');
      assert.match(missing.body.message, /operation "nope" not found/);
      for (const q of ['page=0', 'page=x', 'items=0', 'items=501', 'items=1.5', 'page=-1']) {
        const bad = await get(`/armory/agent/operations?${q}`);
        assert.equal(bad.status, 400, q);
        assert.equal(bad.body.error, 'bad_request');
      }
      assert.equal((await get('/armory/agent/operations/bad%20id')).status, 400);
      const post = await fetch(`${t.gateway.httpUrl}/armory/agent/operations/list-3`, { method: 'DELETE' });
      assert.equal(post.status, 405);
    });
  });
}
