/**
 * Secret values in operation requests are never at rest in plaintext and never shown to a reader: an apply or patch
 * carrying a Secret is stored redacted with the original fields sealed (AES-256-GCM, `secrets.keyFile`), every read
 * surface shows `<redacted>`, the agent still receives the real values, redelivery after a restart works with the same
 * (or a rotated) key file, results are stored without Secret data, and a secure gateway without a key refuses such
 * operations. Real gateway, real databases, a test agent on a real stream.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { JsonObject } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { startGateway, loadGatewayConfig } from '../../src/gateway/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { sealLegacyRequests } from '../../src/gateway/operations/legacy-requests.js';
import { createOperationSealer } from '../../src/gateway/operations/operation-sealing.js';
import { createKeyRing } from '../../src/gateway/secrets/key-ring.js';
import { testDrivers } from '../../testkit/databases.js';
import { queryRows, startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { gate, okResult, startOperationAgent, type OperationAgent } from './operations-helpers.js';

const MARK = 'hunter2-do-not-store';
const DATA_VALUE = Buffer.from('s3cr3t-data-value').toString('base64');
const YAML_SECRET = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: default
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"stringData":{"password":"${MARK}"}}'
type: Opaque
stringData:
  password: ${MARK}
data:
  token: ${DATA_VALUE}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
  namespace: default
data:
  colour: blue
`;
const JSON_LIST = JSON.stringify({
  apiVersion: 'v1',
  kind: 'List',
  items: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'j' }, stringData: { key: MARK } }],
});
const TOKENS = { writer: 'writer-token-0123456789abcdef', reader: 'reader-token-0123456789abcdef', agent: 'agent-token-0123456789abcdef' };

const keyLine = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;
/** Everything a reader could learn the values from: the plaintext, its base64, the data value. */
const leaks = (text: string) => [MARK, Buffer.from(MARK).toString('base64'), DATA_VALUE].filter((m) => text.includes(m));

for (const driver of testDrivers()) {
  describe(`Secret values in operations (${driver})`, { concurrency: false }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-secrets-'));
    const keyFile = join(dir, 'keys');
    writeFileSync(keyFile, `${keyLine('k1')}\n`);
    const secure = {
      insecure: false,
      secrets: { keyFile },
      operations: { agentWaitSeconds: 5, sweepIntervalMs: 100, defaultTimeoutSeconds: 30 },
      auth: { tokens: Object.entries(TOKENS).map(([subject, token]) => ({ subject, token })) },
      authorization: {
        rules: [
          { kind: 'token' as const, subject: '^writer$', roles: ['read' as const, 'write' as const], accounts: ['*'] },
          { kind: 'token' as const, subject: '^reader$', roles: ['read' as const] },
          { kind: 'token' as const, subject: '^agent$', roles: ['agent' as const], accounts: ['*'] },
        ],
      },
    };
    let t: TestGateway;
    const agents: OperationAgent[] = [];
    const writer = { headers: { authorization: `Bearer ${TOKENS.writer}` } };
    const reader = { headers: { authorization: `Bearer ${TOKENS.reader}` } };
    let client: Client<typeof OperationService>;
    let connect: Client<typeof OperationService>;
    before(async () => {
      t = await startTestGateway(driver, driver === 'pglite' ? { ...secure, database: join(dir, 'db') } : secure);
      client = createClient(OperationService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
      connect = createClient(OperationService, createConnectTransport({ baseUrl: t.gateway.httpUrl, httpVersion: '1.1' }));
    });
    after(async () => {
      for (const a of agents) await a.close().catch(() => {});
      await t?.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const stored = async (id: string) =>
      (
        await t.query<{ request: string; result: string | null }>(
          `select request::text as request, result::text as result from operations where id = '${id}'`,
        )
      )[0]!;

    test('stored sealed, shown redacted on every read surface, sent in full, results stored without Secret data', async () => {
      const seen: string[] = [];
      const a = await startOperationAgent(t.gateway.grpcUrl, 'agent-secrets', ['sec-1'], {
        bearer: TOKENS.agent,
        onOperation: (op) =>
          void seen.push(op.spec.case === 'apply' ? op.spec.value.manifests : op.spec.case === 'patch' ? op.spec.value.patch : ''),
        // A careless agent: Secrets with their data, also inside a List (the result rules: a patch returns exactly
        // its target, an apply what it applied).
        answer: (op) => ({
          ...okResult(op),
          objects: [
            { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'default' }, data: { token: DATA_VALUE } },
            ...(op.spec.case === 'patch'
              ? []
              : [
                  {
                    apiVersion: 'v1',
                    kind: 'List',
                    metadata: { name: 'bundle' },
                    items: [{ kind: 'Secret', metadata: { name: 'j' }, stringData: { key: MARK } }],
                  },
                ]),
          ] as JsonObject[],
        }),
      });
      agents.push(a);
      const ids: string[] = [];
      for (const manifests of [YAML_SECRET, JSON_LIST]) {
        const { operation } = await client.submitOperation(
          { account: 'sec-1', spec: { case: 'apply', value: { manifests } }, wait: true },
          writer,
        );
        assert.equal(operation!.state, OperationState.SUCCEEDED);
        ids.push(operation!.id);
      }
      const patched = await client.submitOperation(
        {
          account: 'sec-1',
          wait: true,
          spec: {
            case: 'patch',
            value: {
              apiVersion: 'v1',
              kind: 'Secret',
              namespace: 'default',
              name: 'db',
              patch: JSON.stringify({ stringData: { password: MARK } }),
            },
          },
        },
        writer,
      );
      ids.push(patched.operation!.id);

      // The agent got the real values.
      assert.equal(seen.length, 3);
      assert.ok(seen[0]!.includes(MARK) && seen[0]!.includes(DATA_VALUE) && seen[1]!.includes(MARK) && seen[2]!.includes(MARK));

      for (const id of ids) {
        const row = await stored(id);
        assert.deepEqual(leaks(row.request), [], `request of ${id} at rest`);
        assert.deepEqual(leaks(row.result ?? ''), [], `result of ${id} at rest`);
        assert.match(row.request, /outpostSealed/);
        // Every read surface, with a read-only token.
        const got = await connect.getOperation({ id }, reader);
        const shown =
          JSON.stringify(got.operation?.operation?.spec.value) +
          JSON.stringify(got.operation?.result ?? {}, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
        assert.deepEqual(leaks(shown), [], 'GetOperation');
        assert.match(shown, /<redacted>/);
        for await (const w of connect.waitOperation({ id }, reader))
          assert.deepEqual(leaks(JSON.stringify(w.operation?.operation?.spec.value)), [], 'WaitOperation');
        const rest = await fetch(`${t.gateway.httpUrl}/armory/agent/operations/${id}`, reader);
        assert.equal(rest.status, 200);
        assert.deepEqual(leaks(await rest.text()), [], 'GET /armory/agent/operations/:id');
      }
      assert.match((await stored(ids[0]!)).request, /colour: blue/, 'what is not secret stays readable');
      const list = await connect.listOperations({ account: 'sec-1' }, reader);
      assert.deepEqual(leaks(JSON.stringify(list.operations.map((o) => o.operation?.spec.value))), [], 'ListOperations');
      const page = await fetch(`${t.gateway.httpUrl}/armory/agent/operations?page=1&items=50`, reader);
      assert.deepEqual(leaks(await page.text()), [], 'GET /armory/agent/operations');

      // A retry under the same id with other Secret values is another request, though its redacted form is the same.
      const other = YAML_SECRET.replace(MARK, 'another-value');
      await assert.rejects(
        client.submitOperation({ account: 'sec-1', id: ids[0], spec: { case: 'apply', value: { manifests: other } } }, writer),
        (err: unknown) => ConnectError.from(err).code === Code.AlreadyExists,
      );
      const same = await client.submitOperation(
        { account: 'sec-1', id: ids[0], spec: { case: 'apply', value: { manifests: YAML_SECRET } } },
        writer,
      );
      assert.equal(same.operation!.state, OperationState.SUCCEEDED, 'the same request is the same operation');
    });

    test("a failure message quoting the request's Secret values is stored and shown redacted, whatever the agent sent", async () => {
      // An older agent that passes the cluster's refusal on verbatim: it quotes the values the request carried.
      const a = await startOperationAgent(t.gateway.grpcUrl, 'agent-echo', ['sec-echo'], {
        bearer: TOKENS.agent,
        answer: (op) => ({
          ...okResult(op),
          success: false,
          objects: [],
          statusCode: 422,
          reason: 'Invalid',
          message:
            `admission webhook denied the request: stringData.password: Invalid value: "${MARK}"` +
            (op.spec.case === 'apply' ? `; data.token: ${DATA_VALUE} (s3cr3t-data-value)` : ''),
        }),
      });
      agents.push(a);
      const applied = await client.submitOperation(
        { account: 'sec-echo', wait: true, spec: { case: 'apply', value: { manifests: YAML_SECRET } } },
        writer,
      );
      assert.equal(applied.operation!.state, OperationState.FAILED);
      const patched = await client.submitOperation(
        {
          account: 'sec-echo',
          wait: true,
          spec: {
            case: 'patch',
            value: { kind: 'secrets', namespace: 'default', name: 'db', patch: JSON.stringify({ stringData: { password: MARK } }) },
          },
        },
        writer,
      );
      assert.equal(patched.operation!.state, OperationState.FAILED);
      for (const { operation } of [applied, patched]) {
        const message = operation!.result!.message;
        assert.deepEqual(leaks(message), [], 'the answer to the submitter');
        assert.ok(!message.includes('s3cr3t-data-value'), 'the decoded data value');
        assert.match(message, /^admission webhook denied the request: stringData\.password: Invalid value: "<redacted>"/);
        assert.deepEqual(leaks((await stored(operation!.id)).result ?? ''), [], 'at rest');
        const shown = await connect.getOperation({ id: operation!.id }, reader);
        assert.deepEqual(leaks(shown.operation!.result!.message), [], 'GetOperation');
      }
      await a.close();
    });

    test('redelivered after a gateway restart with a rotated key file; a key that left the file fails the operation clearly', async () => {
      const release = gate();
      const a = await startOperationAgent(t.gateway.grpcUrl, 'agent-restart', ['sec-2'], {
        bearer: TOKENS.agent,
        answer: async (op) => {
          await release.promise;
          return okResult(op);
        },
      });
      agents.push(a);
      const { operation: sent } = await client.submitOperation(
        { account: 'sec-2', spec: { case: 'apply', value: { manifests: YAML_SECRET } } },
        writer,
      );
      await a.waitReceived(sent!.id);
      await a.cut();
      // A request an older version stored in plaintext: the restarted gateway seals it.
      const plain = JSON.stringify({ id: 'legacy-restart', account: 'sec-2', apply: { manifests: YAML_SECRET } }).replaceAll("'", "''");
      await t.query(`insert into operations (id, account, type, request, state, gateway_id, timeout_ms, received_at, stored_at, deadline_at, request_hash)
        values ('legacy-restart', 'sec-2', 'apply', '${plain}', 'SUCCEEDED', 'gw-old', 30000, now(), now(), now(), 'old-hash')`);
      await t.gateway.close();
      // Rotation: a new first key encrypts from now on; the old one still decrypts.
      const old = (await import('node:fs')).readFileSync(keyFile, 'utf8');
      writeFileSync(keyFile, `${keyLine('k2')}\n${old}`);
      const restarted = await startGateway(
        loadGatewayConfig({
          env: {},
          overrides: {
            host: '127.0.0.1',
            httpPort: 0,
            grpcPort: 0,
            id: 'gw-test',
            database: driver === 'pglite' ? join(dir, 'db') : t.testDb.url,
            ...secure,
          },
        }),
        { logger: createSilentLogger() },
      );
      const testDb = t.testDb;
      t = {
        gateway: restarted,
        testDb,
        async close() {
          await restarted.close();
          await testDb.drop();
        },
        query: (text) => queryRows(restarted.database, text),
      };
      client = createClient(OperationService, createGrpcTransport({ baseUrl: restarted.grpcUrl }));
      for (const until = Date.now() + 20_000; /outpostSealed/.test((await stored('legacy-restart')).request) === false; ) {
        if (Date.now() > until) assert.fail('the restarted gateway did not seal the plaintext request');
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.deepEqual(leaks((await stored('legacy-restart')).request), []);
      await a.reconnect(restarted.grpcUrl);
      const again = await a.waitReceived(sent!.id, 2);
      assert.ok(again.spec.case === 'apply' && again.spec.value.manifests.includes(MARK), 'redelivered with the real values');
      release.open();
      const { operation } = await client.submitOperation(
        { account: 'sec-2', id: sent!.id, spec: { case: 'apply', value: { manifests: YAML_SECRET } }, wait: true },
        writer,
      );
      assert.equal(operation!.state, OperationState.SUCCEEDED);
      assert.match((await stored(sent!.id)).request, /"kid": ?"k1"/, 'sealed with the key of its time');

      // A new operation is sealed with the new first key; once that key leaves the file, it cannot be sent.
      const held = gate();
      const b = await startOperationAgent(restarted.grpcUrl, 'agent-rotated', ['sec-3'], {
        bearer: TOKENS.agent,
        answer: async (op) => (await held.promise, okResult(op)),
      });
      agents.push(b);
      const { operation: second } = await client.submitOperation(
        { account: 'sec-3', spec: { case: 'apply', value: { manifests: YAML_SECRET } } },
        writer,
      );
      await b.waitReceived(second!.id);
      assert.match((await stored(second!.id)).request, /"kid": ?"k2"/);
      await b.cut();
      writeFileSync(keyFile, old);
      await b.reconnect();
      const { operation: failed } = await client.submitOperation(
        { account: 'sec-3', id: second!.id, spec: { case: 'apply', value: { manifests: YAML_SECRET } }, wait: true },
        writer,
      );
      assert.equal(failed!.state, OperationState.FAILED);
      assert.match(failed!.error, /key "k2" is unknown/);
      held.open();
    });

    test('requests stored in plaintext before the upgrade are sealed after start-up, or redacted and failed without a key', async () => {
      const legacy = (id: string, state: string, manifests = YAML_SECRET) =>
        t.query(`insert into operations (id, account, type, request, state, gateway_id, timeout_ms, received_at, stored_at, deadline_at, request_hash)
          values ('${id}', 'sec-legacy', 'apply', '${JSON.stringify({ id, account: 'sec-legacy', apply: { manifests } }).replaceAll("'", "''")}', '${state}', 'gw-old', 30000,
            now(), now(), now() + interval '30 seconds', 'old-hash')`);
      await legacy('legacy-done', 'SUCCEEDED');
      await legacy('legacy-open', 'SENT');
      // The kind written with a YAML escape: still a Secret.
      await legacy(
        'legacy-escaped',
        'SUCCEEDED',
        `apiVersion: v1\nkind: "Secr\\u0065t"\nmetadata:\n  name: e\nstringData:\n  password: ${MARK}\n`,
      );
      // The kind in lower case (as the CLI writes it), and spelled across an escaped line break: Secrets too.
      await legacy('legacy-lower', 'SUCCEEDED', `apiVersion: v1\nkind: secret\nmetadata:\n  name: l\nstringData:\n  password: ${MARK}\n`);
      await legacy(
        'legacy-folded',
        'SUCCEEDED',
        `apiVersion: v1\nkind: "Sec\\\n  ret"\nmetadata:\n  name: f\nstringData:\n  password: ${MARK}\n`,
      );
      const logger = createSilentLogger();
      const withKey = createOperationSealer(createKeyRing({ keyFile, insecure: false, logger }));
      assert.equal(await sealLegacyRequests(t.gateway.database, withKey, logger), 5);
      for (const id of ['legacy-escaped', 'legacy-lower', 'legacy-folded']) assert.deepEqual(leaks((await stored(id)).request), [], id);
      for (const id of ['legacy-done', 'legacy-open']) {
        const row = await stored(id);
        assert.deepEqual(leaks(row.request), [], id);
        assert.match(row.request, /outpostSealed/);
        const opened = await withKey.open(
          (await t.query<Record<string, any>>(`select id, account, request from operations where id = '${id}'`))[0] as never,
        );
        assert.ok(opened.spec.case === 'apply' && opened.spec.value.manifests === YAML_SECRET, 'the sealed values are the original ones');
      }
      assert.equal(await sealLegacyRequests(t.gateway.database, withKey, logger), 0, 'a second run changes nothing');

      await legacy('legacy-nokey', 'PENDING');
      const noKey = createOperationSealer(createKeyRing({ insecure: false, logger }));
      assert.equal(await sealLegacyRequests(t.gateway.database, noKey, logger), 1);
      const [row] = await t.query<{ request: string; state: string; error: string }>(
        `select request::text as request, state, error from operations where id = 'legacy-nokey'`,
      );
      assert.deepEqual(leaks(row!.request), []);
      assert.equal(row!.state, 'FAILED');
      assert.match(row!.error, /no key \(secrets\.keyFile\)/);
    });

    test('a secure gateway without secrets.keyFile refuses operations carrying Secret values, and only those', async () => {
      const bare = await startTestGateway(driver, { ...secure, secrets: {} });
      try {
        const a = await startOperationAgent(bare.gateway.grpcUrl, 'agent-nokey', ['sec-4'], { bearer: TOKENS.agent });
        agents.push(a);
        const c = createClient(OperationService, createGrpcTransport({ baseUrl: bare.gateway.grpcUrl }));
        await assert.rejects(
          c.submitOperation({ account: 'sec-4', spec: { case: 'apply', value: { manifests: YAML_SECRET } } }, writer),
          (err: unknown) =>
            ConnectError.from(err).code === Code.FailedPrecondition && /secrets\.keyFile/.test(ConnectError.from(err).rawMessage),
        );
        assert.equal((await bare.query(`select 1 from operations`)).length, 0, 'nothing stored');
        const plain = await c.submitOperation(
          { account: 'sec-4', wait: true, spec: { case: 'apply', value: { manifests: YAML_SECRET.split('---\n')[1]! } } },
          writer,
        );
        assert.equal(plain.operation!.state, OperationState.SUCCEEDED);
        await a.close();
      } finally {
        await bare.close();
      }
    });
  });
}

describe('secrets.keyFile errors stop the gateway with a clear message that quotes no key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-keyfile-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const cases: [string, RegExp][] = [
    ['k1:c2hvcnQ=\n', /line 1: key k1 is not 32 bytes/],
    ['no colon here\n', /line 1: expected keyId:base64key/],
    [`${keyLine('k1')}\n${keyLine('k1')}\n`, /line 2: key id k1 appears twice/],
    ['# only a comment\n', /no key/],
  ];
  for (const [text, message] of cases) {
    test(message.source, async () => {
      const file = join(dir, `k-${randomBytes(4).toString('hex')}`);
      writeFileSync(file, text);
      const config = loadGatewayConfig({
        env: {},
        overrides: { host: '127.0.0.1', httpPort: 0, grpcPort: 0, database: 'memory://', secrets: { keyFile: file } },
      });
      await assert.rejects(startGateway(config, { logger: createSilentLogger() }), (err: Error) => {
        assert.match(err.message, /^secrets\.keyFile: /);
        assert.match(err.message, message);
        assert.ok(
          !err.message.includes(text.split(':')[1]?.trim() ?? '\0') || text.startsWith('#') || text.startsWith('no'),
          'no key material in the message',
        );
        return true;
      });
    });
  }
  test('a missing file', async () => {
    const config = loadGatewayConfig({
      env: {},
      overrides: { host: '127.0.0.1', httpPort: 0, grpcPort: 0, database: 'memory://', secrets: { keyFile: join(dir, 'absent') } },
    });
    await assert.rejects(startGateway(config, { logger: createSilentLogger() }), /secrets\.keyFile: cannot read/);
  });
});
