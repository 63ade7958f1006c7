/**
 * A Secret's value never leaves the cluster through a patch, end to end over real sockets (sandbox → agent → gateway
 * → database → every reader), on PGlite and on Postgres. A marker value is planted in a Secret, then:
 * - a JSON patch copying it into an annotation is refused at every edge before anything is stored or sent: Connect
 *   and gRPC (INVALID_ARGUMENT), Connect's JSON over HTTP/1.1 (400), `outpost patch --type json` (exit 2), Spinnaker's
 *   `patchManifest` through `/kubernetes/ops` (a Spring-shaped 400, no task);
 * - the Secret is then patched in the cluster behind Outpost's back (annotations and a label holding the value), and
 *   read through every path: the cache, an Outpost `get`, a Spinnaker manifest read and a Spinnaker patch task;
 * - an apply whose manifest repeats the value in an annotation is stored redacted and cached without it;
 * - a value of a Secret patch that the cluster echoes in its refusal ends in the operation's message redacted.
 * Finally the marker (plain and base64) and the echoed value are looked for everywhere: every table's rows, the
 * gateway's and agent's logs, the audit log, the wire, and every read API (objects, operations, REST `/armory`,
 * Clouddriver manifests, tasks and credentials, accounts, agents, fleet, health).
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { OperationService, OperationState, type SubmitOperationRequestSchema } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createLogger } from '../../src/shared/logger.js';
import { testDrivers } from '../../testkit/databases.js';
import { eventually } from '../../testkit/eventually.js';
import { queryRows } from '../../testkit/test-gateway.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { runCli } from '../cli/operations-helpers.js';
import { createOrcaClient, type Obj, type OrcaClient } from '../spinnaker/orca-client.js';

const MARK = 'scan-marker-e41f7c2a';
const MARK_B64 = Buffer.from(MARK).toString('base64');
/** A value a patch of a Secret sets, which the cluster's refusal quotes back. */
const ECHOED = 'echoed-secret-name-93d0';
const NEEDLES = [MARK, MARK_B64, ECHOED];
const COPY = [{ op: 'copy', from: '/data/password', path: '/metadata/annotations/leak' }];

const json = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
const found = (text: string) => NEEDLES.filter((n) => text.includes(n));

for (const driver of testDrivers()) {
  describe(`a Secret's value never leaves the cluster through a patch (${driver})`, { concurrency: false }, () => {
    let stack: Stack;
    let orca: OrcaClient;
    let logText = '';
    const operationIds: string[] = [];
    const taskIds: string[] = [];
    const patch = (kind: string, ops: unknown, extra: Partial<{ apiVersion: string; name: string }> = {}) =>
      ({
        account: 'sandbox',
        wait: true,
        timeout: { seconds: 20n },
        spec: {
          case: 'patch',
          value: {
            apiVersion: extra.apiVersion ?? '',
            kind,
            namespace: 'demo',
            name: extra.name ?? 'marked',
            type: PatchType.JSON,
            patch: JSON.stringify(ops),
          },
        },
      }) as MessageInitShape<typeof SubmitOperationRequestSchema>;
    const sql = <T>(text: string) => queryRows<T>(stack.gateway.database, text);
    const count = async (table: string) => Number((await sql<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n);
    /** A Connect unary call in JSON, as the dashboard makes it: the body as text. */
    const connectJson = async (method: string, body: unknown) => {
      const res = await fetch(`${stack.gateway.httpUrl}/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      assert.equal(res.status, 200, `${method}: ${text}`);
      return text;
    };
    const cachedSecret = async () =>
      JSON.parse(
        await connectJson('outpost.api.v1.ObjectService/GetObject', {
          account: 'sandbox',
          kind: 'Secret',
          namespace: 'demo',
          name: 'marked',
        }),
      ).object?.object as Obj | undefined;

    before(async () => {
      const out = new PassThrough();
      out.on('data', (chunk: Buffer) => (logText += chunk.toString()));
      stack = await startStack({ driver, agents: [{}], logger: createLogger({ level: 'debug', destination: out }) });
      orca = createOrcaClient(stack.gateway.httpUrl, { 'X-SPINNAKER-USER': 'alice@example.com' });
      stack.sandbox.store.create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'marked', namespace: 'demo', annotations: { 'meta.helm.sh/release-name': 'vault' } },
        type: 'Opaque',
        data: { password: MARK_B64 },
      });
      await eventually('the Secret in the cache', cachedSecret);
    });
    after(async () => {
      await stack?.close();
    });

    test('a JSON patch copying its value is refused at every edge, before anything is stored or sent', async () => {
      const operations = await count('operations');
      const tasks = await count('spinnaker_tasks');
      const grpc = createClient(OperationService, createGrpcTransport({ baseUrl: stack.gateway.grpcUrl }));
      const connect = createClient(OperationService, createConnectTransport({ baseUrl: stack.gateway.httpUrl, httpVersion: '1.1' }));
      const refusals: [string, MessageInitShape<typeof SubmitOperationRequestSchema>][] = [
        ['Secret', patch('Secret', COPY)],
        ['secrets', patch('secrets', COPY, { apiVersion: 'v1' })],
        ['v1/Secret, the whole object', patch('v1/Secret', [{ op: 'copy', from: '', path: '/metadata/annotations/leak' }])],
        ['secret, move', patch('secret', [{ op: 'move', from: '/data/password', path: '/metadata/labels/leak' }])],
        [
          'escaped last-applied',
          patch('Secret', [
            {
              op: 'copy',
              from: '/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration',
              path: '/metadata/annotations/leak',
            },
          ]),
        ],
        ['test as an oracle', patch('Secret', [{ op: 'test', path: '/data/password', value: MARK_B64 }])],
      ];
      for (const [name, request] of refusals) {
        for (const [transport, client] of [
          ['gRPC', grpc],
          ['Connect', connect],
        ] as const) {
          await assert.rejects(client.submitOperation(request), (err: unknown) => {
            const e = ConnectError.from(err);
            assert.equal(e.code, Code.InvalidArgument, `${name} over ${transport}: ${e.message}`);
            assert.match(e.rawMessage, /would read the Secret's values|must be a list|pointer/);
            assert.deepEqual(found(e.rawMessage), []);
            return true;
          });
        }
      }
      const rest = await fetch(`${stack.gateway.httpUrl}/outpost.api.v1.OperationService/SubmitOperation`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          account: 'sandbox',
          patch: { kind: 'Secret', namespace: 'demo', name: 'marked', type: 'PATCH_TYPE_JSON', patch: JSON.stringify(COPY) },
        }),
      });
      assert.equal(rest.status, 400);
      const restBody = (await rest.json()) as { code: string; message: string };
      assert.equal(restBody.code, 'invalid_argument');
      assert.match(restBody.message, /would read the Secret's values/);

      for (const target of ['secret/marked', 'secrets/marked']) {
        const cli = await runCli([
          'patch',
          target,
          '-n',
          'demo',
          '--type',
          'json',
          '-p',
          JSON.stringify(COPY),
          '--gateway',
          stack.gateway.httpUrl,
          '--account',
          'sandbox',
        ]);
        assert.equal(cli.code, 2, cli.err);
        assert.match(
          cli.err,
          /^error: refusing to patch secret\/marked: JSON patch operation 0 \(copy from "\/data\/password"\) would read the Secret's values/,
        );
      }

      for (const manifestName of ['secret marked', 'secrets marked', 'Secret.core marked']) {
        const res = await orca.post(
          [
            {
              patchManifest: {
                account: 'sandbox',
                cloudProvider: 'kubernetes',
                manifestName,
                location: 'demo',
                options: { mergeStrategy: 'json' },
                patchBody: COPY,
              },
            },
          ],
          `secret-copy-${manifestName}`,
        );
        assert.equal(res.status, 400, json(res.body));
        assert.equal(res.body.status, 400);
        assert.equal(res.body.error, 'Bad Request');
        assert.equal(res.body.path, '/kubernetes/ops');
        assert.match(res.body.message, /would read the Secret's values/);
      }

      assert.equal(await count('operations'), operations, 'no operation was stored');
      assert.equal(await count('spinnaker_tasks'), tasks, 'no task was created');
      const live = stack.sandbox.store.get('v1', 'Secret', 'demo', 'marked') as Obj;
      assert.equal(live.metadata.annotations.leak, undefined, 'nothing reached the cluster');
      // Each refusal is in the audit log, with its reason and the caller.
      await eventually('the refusals in the audit log', async () => {
        const rows = await sql<{ status: number; error: string }>(`select status, error from audit_entries where status = 400`);
        return rows.filter((r) => /would read the Secret's values/.test(r.error)).length >= refusals.length * 2 + 1 + 3 || undefined;
      });
    });

    test("a copy made in the cluster behind Outpost's back reaches no cache, result or task", async () => {
      const live = stack.sandbox.store.get('v1', 'Secret', 'demo', 'marked') as Obj;
      stack.sandbox.store.update({
        ...live,
        metadata: {
          ...live.metadata,
          labels: { copied: MARK, app: 'vault' },
          annotations: { ...live.metadata.annotations, 'copied-b64': MARK_B64, 'copied-plain': `password=${MARK}`, note: 'kept' },
        },
      });
      const cached = await eventually('the update in the cache', async () => {
        const object = await cachedSecret();
        return object?.metadata?.annotations?.note === 'kept' ? object : undefined;
      });
      assert.deepEqual(cached.metadata.annotations, { 'meta.helm.sh/release-name': 'vault', note: 'kept' }, 'ordinary annotations stay');
      assert.deepEqual(cached.metadata.labels, { app: 'vault' });

      const client = createClient(OperationService, createConnectTransport({ baseUrl: stack.gateway.httpUrl, httpVersion: '1.1' }));
      const get = await client.submitOperation({
        account: 'sandbox',
        wait: true,
        spec: { case: 'get', value: { kind: 'secrets', namespace: 'demo', name: 'marked' } },
      });
      assert.equal(get.operation!.state, OperationState.SUCCEEDED, get.operation!.error);
      // A read is not stored (nothing to read back later): its answer is scanned here.
      assert.deepEqual(found(json(get)), [], 'the read answer holds neither the marker nor the value');
      const manifest = await orca.manifest('sandbox', 'demo', 'secret marked');
      assert.equal(manifest.status, 200, json(manifest.body));
      assert.equal(manifest.body.manifest.metadata.annotations.note, 'kept');
      const task = await orca.run(
        'patchManifest',
        {
          account: 'sandbox',
          cloudProvider: 'kubernetes',
          manifestName: 'secret marked',
          location: 'demo',
          options: { mergeStrategy: 'merge' },
          patchBody: { metadata: { labels: { patched: 'by-spinnaker' } } },
        },
        true,
      );
      assert.equal(task.status, 'SUCCEEDED', json(task.task));
      taskIds.push(task.task.id);
      assert.equal(task.outputs.manifests?.[0]?.metadata?.labels?.patched, 'by-spinnaker');
    });

    test('an apply whose manifest repeats a value in an annotation is stored redacted and cached without it', async () => {
      const client = createClient(OperationService, createConnectTransport({ baseUrl: stack.gateway.httpUrl, httpVersion: '1.1' }));
      const manifests = `apiVersion: v1
kind: Secret
metadata:
  name: applied-copy
  namespace: demo
  annotations: {copy: "${MARK}", note: applied}
stringData: {password: "${MARK}"}
`;
      const { operation } = await client.submitOperation({ account: 'sandbox', wait: true, spec: { case: 'apply', value: { manifests } } });
      assert.equal(operation!.state, OperationState.SUCCEEDED, operation!.error || operation!.result?.message);
      operationIds.push(operation!.id);
      const cached = await eventually('the applied Secret in the cache', async () => {
        const text = await connectJson('outpost.api.v1.ObjectService/GetObject', {
          account: 'sandbox',
          kind: 'Secret',
          namespace: 'demo',
          name: 'applied-copy',
        }).catch(() => undefined);
        return text ? (JSON.parse(text).object?.object as Obj) : undefined;
      });
      assert.deepEqual(cached.metadata.annotations, { note: 'applied' });
    });

    test("a Secret patch's value that the cluster echoes in its refusal is stored and shown redacted", async () => {
      const client = createClient(OperationService, createConnectTransport({ baseUrl: stack.gateway.httpUrl, httpVersion: '1.1' }));
      const { operation } = await client.submitOperation(patch('Secret', [{ op: 'replace', path: '/metadata/name', value: ECHOED }]));
      assert.equal(operation!.state, OperationState.FAILED);
      operationIds.push(operation!.id);
      assert.match(operation!.result!.message, /the name of the object \(<redacted>\) does not match the name on the URL \(marked\)/);
    });

    test('the marker and the echoed value are nowhere: tables, logs, audit log, wire, read APIs', async () => {
      const problems: string[] = [];
      const scan = (where: string, text: string) => {
        for (const needle of found(text)) problems.push(`${JSON.stringify(needle)} in ${where}`);
      };
      const tables = await sql<{ table_name: string }>(`select table_name from information_schema.tables where table_schema = 'public'`);
      assert.ok(tables.some((t) => t.table_name === 'audit_entries') && tables.some((t) => t.table_name === 'objects'));
      for (const { table_name } of tables) {
        const rows = await sql<{ dump: string | null }>(`select string_agg(t::text, E'\\n') as dump from "${table_name}" t`);
        scan(`table ${table_name}`, rows[0]?.dump ?? '');
      }
      const lines = logText.split('\n').filter((l) => l.trim() !== '');
      const component = (line: string) => (JSON.parse(line) as { component?: string }).component;
      assert.ok(lines.some((l) => component(l) === 'gateway') && lines.some((l) => component(l) === 'agent'));
      assert.ok(
        lines.some((l) => l.includes('"msg":"audit"')),
        'the audit log lines are among the logs',
      );
      scan('the gateway and agent logs', lines.filter((l) => component(l) !== 'sandbox').join('\n'));
      scan('the wire from the agent', stack.proxy.upstreamBytes().toString('latin1'));

      const reads: [string, unknown][] = [
        ['outpost.api.v1.ObjectService/ListObjects', { account: 'sandbox', kind: 'Secret', namespace: 'demo' }],
        ['outpost.api.v1.ObjectService/ListObjects', { account: 'sandbox' }],
        ['outpost.api.v1.ObjectService/GetObject', { account: 'sandbox', kind: 'Secret', namespace: 'demo', name: 'marked' }],
        ['outpost.api.v1.ObjectService/SummarizeHealth', {}],
        ['outpost.api.v1.OperationService/ListOperations', { pageSize: 500 }],
        ['outpost.api.v1.AuditService/ListAuditEvents', { pageSize: 500 }],
        ['outpost.api.v1.AccountService/ListAccounts', {}],
        ['outpost.api.v1.AccountService/GetAccount', { name: 'sandbox' }],
        ['outpost.api.v1.AccountService/ListAgents', {}],
        ['outpost.api.v1.FleetService/GetFleet', {}],
      ];
      for (const id of operationIds) reads.push(['outpost.api.v1.OperationService/GetOperation', { id }]);
      for (const [method, body] of reads) scan(method, await connectJson(method, body));
      const audit = JSON.parse(await connectJson('outpost.api.v1.AuditService/ListAuditEvents', { pageSize: 500 })) as {
        events?: unknown[];
      };
      assert.ok((audit.events ?? []).length > 0, 'the audit log has entries');

      const client = createClient(OperationService, createConnectTransport({ baseUrl: stack.gateway.httpUrl, httpVersion: '1.1' }));
      for (const id of operationIds) for await (const w of client.waitOperation({ id })) scan(`WaitOperation ${id}`, json(w));

      const restPaths = [
        '/armory/agent/operations?page=1&items=500',
        ...operationIds.map((id) => `/armory/agent/operations/${id}`),
        '/armory/accounts',
        '/armory/agents',
        '/manifests/sandbox/demo/secret%20marked',
        '/manifests/sandbox/demo/secret%20marked?includeEvents=true',
        '/credentials',
        '/credentials/sandbox',
        ...taskIds.map((id) => `/task/${id}`),
      ];
      for (const path of restPaths) {
        const res = await fetch(`${stack.gateway.httpUrl}${path}`);
        const text = await res.text();
        assert.equal(res.status, 200, `${path}: ${text}`);
        scan(`GET ${path}`, text);
      }
      assert.deepEqual(problems, []);
    });
  });
}
