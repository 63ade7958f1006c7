/**
 * Input nested deeper than MAX_NESTING_DEPTH is refused at every entry point before anything exists
 * (docs/hostile-input.md, "Nesting"): a Clouddriver description (400 in Spring's shape, no task row), a REST body on
 * `/armory` (400 `bad_request`), apply manifests and patches over Connect, as JSON and as YAML (INVALID_ARGUMENT, no
 * operation row), an object an agent streams (INVALID_ARGUMENT, nothing cached) — and the gateway answers normally
 * afterwards. A document at the limit still goes through.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { OperationService } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { MAX_NESTING_DEPTH } from '../../src/shared/nesting-depth.js';
import { testDrivers } from '../../testkit/databases.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { Code, ConnectError, connectAgent, event, EventType, events, openAgentStream } from '../../testkit/test-agent-stream.js';

const DEEP = 100_000;

/** `{"a":{"a":…{"a":1}…}}`, `levels` objects deep. */
function deepObject(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

/** A block YAML mapping `levels` deep: `k:\n k:\n  k: …`. */
function deepYaml(levels: number): string {
  return `${Array.from({ length: levels }, (_, i) => `${' '.repeat(i)}k:`).join('\n')} 1\n`;
}

for (const driver of testDrivers()) {
  describe(`nesting bound at the edge (${driver})`, { concurrency: false }, () => {
    let gw: TestGateway;
    let ops: ReturnType<typeof createClient<typeof OperationService>>;

    before(async () => {
      gw = await startTestGateway(driver);
      ops = createClient(OperationService, createConnectTransport({ baseUrl: gw.gateway.httpUrl, httpVersion: '1.1' }));
    });
    after(async () => {
      await gw?.close();
    });

    const count = async (table: string) => Number((await gw.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n);

    test('a Clouddriver description 100,000 levels deep is a 400 in Spring shape, and no task exists', async () => {
      const description = `{"deployManifest":{"account":"a","moniker":{"app":"x"},"manifests":[{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"data":${deepObject(DEEP)}}]}}`;
      const res = await fetch(`${gw.gateway.httpUrl}/kubernetes/ops`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `[${description}]`,
      });
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 300));
      assert.equal(body.error, 'Bad Request');
      assert.equal(body.status, 400);
      assert.match(String(body.message), new RegExp(`nests objects and arrays more than ${MAX_NESTING_DEPTH} levels deep`));
      assert.equal(await count('spinnaker_tasks'), 0);
    });

    test('a REST body on /armory nested too deeply is a 400 bad_request', async () => {
      const res = await fetch(`${gw.gateway.httpUrl}/armory/accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `[{"name":"deep","kubeconfig":${deepObject(DEEP)}}]`,
      });
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(res.status, 400);
      assert.equal(body.error, 'bad_request');
      assert.match(String(body.message), /the body nests objects and arrays more than 512 levels deep/);
      assert.equal(await count("accounts where name = 'deep'"), 0);
    });

    test('apply manifests and patches nested too deeply, as JSON or YAML, are INVALID_ARGUMENT and store nothing', async () => {
      const cases: [string, Parameters<typeof ops.submitOperation>[0]['spec']][] = [
        ['apply.manifests', { case: 'apply', value: { manifests: deepObject(DEEP) } }],
        ['apply.manifests', { case: 'apply', value: { manifests: `${'['.repeat(DEEP)}${']'.repeat(DEEP)}` } }],
        ['apply.manifests', { case: 'apply', value: { manifests: deepYaml(MAX_NESTING_DEPTH + 10) } }],
        [
          'patch.patch',
          {
            case: 'patch',
            value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'x', patch: `{"data":${deepObject(DEEP)}}` },
          },
        ],
      ];
      for (const [field, spec] of cases) {
        await assert.rejects(
          ops.submitOperation({ account: 'nowhere', spec }),
          (err: unknown) =>
            err instanceof ConnectError &&
            err.code === Code.InvalidArgument &&
            err.rawMessage === `${field} nests objects and arrays more than ${MAX_NESTING_DEPTH} levels deep`,
          field,
        );
      }
      assert.equal(await count('operations'), 0);
    });

    test('an apply at the limit passes the check (and meets the next one: the account is unknown)', async () => {
      const manifest = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":${deepObject(MAX_NESTING_DEPTH - 1)}}`;
      await assert.rejects(
        ops.submitOperation({ account: 'nowhere', spec: { case: 'apply', value: { manifests: manifest } } }),
        (err: unknown) => err instanceof ConnectError && err.code === Code.NotFound,
      );
    });

    test('an object an agent streams nested too deeply ends the stream INVALID_ARGUMENT and caches nothing', async () => {
      const stream = openAgentStream(gw.gateway.grpcUrl);
      try {
        await connectAgent(stream, 'deep-agent', [{ name: 'deep-account' }]);
        const object = {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'deep', namespace: 'default', uid: 'uid-deep', resourceVersion: '1' },
          data: {},
        };
        const ev = event('deep-account', EventType.ADDED, object);
        ev.objectJson = new TextEncoder().encode(JSON.stringify(object).replace('"data":{}', `"data":${deepObject(DEEP)}`));
        stream.send(events(1, [ev]));
        const ended = await stream.ended;
        assert.equal(ended?.code, Code.InvalidArgument, String(ended));
        assert.match(ended!.rawMessage, /object_json nests objects and arrays more than 512 levels deep/);
      } finally {
        stream.abort();
      }
      assert.equal(await count("objects where account = 'deep-account'"), 0);
      const health = await fetch(`${gw.gateway.httpUrl}/health`);
      assert.equal(health.status, 200);
    });
  });
}
