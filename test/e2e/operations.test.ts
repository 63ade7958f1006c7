/**
 * Operations end to end over real sockets: client (Connect API, REST, the `outpost` CLI as a child process) →
 * gateway → (recording TCP proxy) → agent → sandbox cluster. Every operation kind, the failure paths Kubernetes
 * reports, typed errors for bad input, a cut agent connection (the effect still happens at most once) and 200
 * concurrent operations across several accounts. Runs on PGlite, and on Postgres when OUTPOST_TEST_POSTGRES is set.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Code, ConnectError } from '@connectrpc/connect';
import { createOperationClient, type OperationClient, type SubmitInit } from '../../src/client/operation-client.js';
import { describeFailure } from '../../src/client/format.js';
import { PatchType, PropagationPolicy, RolloutAction } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { OperationState, type OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { runCli } from '../cli/operations-helpers.js';

const bin = fileURLToPath(new URL('../../bin/outpost.js', import.meta.url));

type Obj = Record<string, any>;
type Spec = SubmitInit['spec'];

/** Runs the real `outpost` binary; resolves with its exit code and output (never rejects on a non-zero exit). */
function outpost(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function deploymentYaml(name: string, image: string, replicas = 2, templateApp = name): string {
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    `  name: ${name}`,
    '  namespace: demo',
    `  labels: {app: ${name}}`,
    'spec:',
    `  replicas: ${replicas}`,
    `  selector: {matchLabels: {app: ${name}}}`,
    '  template:',
    `    metadata: {labels: {app: ${templateApp}}}`,
    `    spec: {containers: [{name: main, image: "${image}"}]}`,
    '',
  ].join('\n');
}

function configMapYaml(name: string, namespace: string, data: Record<string, string>): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata: ${JSON.stringify(data)}\n`;
}

/** Posts Connect JSON to SubmitOperation like curl would. */
async function submitJson(system: Stack, body: string): Promise<{ status: number; json: Obj }> {
  const res = await fetch(`${system.gateway.httpUrl}/outpost.api.v1.OperationService/SubmitOperation`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, json: (await res.json()) as Obj };
}

async function restTotal(system: Stack): Promise<number> {
  const res = await fetch(`${system.gateway.httpUrl}/armory/agent/operations?page=1&items=1`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { total: number }).total;
}

function assertSucceeded(record: OperationRecord, what: string): OperationRecord {
  assert.equal(record.state, OperationState.SUCCEEDED, `${what}: ${OperationState[record.state]} ${describeFailure(record)}`);
  assert.equal(record.result?.success, true, `${what}: ${describeFailure(record)}`);
  return record;
}

function assertFailed(record: OperationRecord, statusCode: number, reason: string, what: string): OperationRecord {
  assert.equal(
    record.state,
    OperationState.FAILED,
    `${what}: expected FAILED, got ${OperationState[record.state]} ${describeFailure(record)}`,
  );
  assert.equal(record.result?.success, false, what);
  assert.equal(record.result?.statusCode, statusCode, `${what}: ${describeFailure(record)}`);
  assert.equal(record.result?.reason, reason, `${what}: ${describeFailure(record)}`);
  return record;
}

for (const driver of testDrivers()) {
  describe(`operations end to end (${driver})`, { concurrency: false }, () => {
    let system: Stack;
    let client: OperationClient;
    const run = (spec: Spec, account = 'sandbox', extra: { id?: string; timeout?: { seconds: bigint } } = {}) =>
      client.submitAndWait({ account, id: extra.id ?? '', timeout: extra.timeout ?? { seconds: 20n }, spec });

    before(async () => {
      system = await startStack({
        driver,
        agents: [
          { id: 'agent-1', account: { name: 'sandbox' } },
          { id: 'agent-2', account: { name: 'second', kinds: ['ConfigMap'] } },
          { id: 'agent-3', account: { name: 'third', kinds: ['ConfigMap'] } },
          { id: 'agent-4', account: { name: 'restricted', user: 'restricted', kinds: ['ConfigMap'] } },
        ],
      });
      client = createOperationClient({ gatewayUrl: system.gateway.httpUrl });
    });
    after(async () => {
      await system?.close();
    });

    test('every operation kind through the Connect API changes the sandbox as asked; REST and ListOperations see them', async () => {
      const { store } = system.sandbox;
      const name = 'e2e-web';
      const dep = () => store.get('apps/v1', 'Deployment', 'demo', name) as Obj | undefined;

      const created = assertSucceeded(
        await run({ case: 'apply', value: { manifests: deploymentYaml(name, 'nginx:1.25') } }),
        'apply (create)',
      );
      assert.equal(created.result!.statusCode, 201);
      assert.equal((created.result!.objects[0] as Obj).metadata.name, name);
      assert.equal(dep()!.spec.replicas, 2);
      assert.ok(
        created.receivedAt && created.storedAt && created.sentAt && created.resultAt && created.totalDuration,
        'timestamps are recorded',
      );
      assert.equal(created.agentId, 'agent-1');
      assert.equal(created.type, 'apply');

      const updated = assertSucceeded(
        await run({ case: 'apply', value: { manifests: deploymentYaml(name, 'nginx:1.26') } }),
        'apply (update)',
      );
      assert.equal(updated.result!.statusCode, 200);
      assert.equal(dep()!.spec.template.spec.containers[0].image, 'nginx:1.26');

      const got = assertSucceeded(await run({ case: 'get', value: { kind: 'Deployment', namespace: 'demo', name } }), 'get');
      assert.equal((got.result!.objects[0] as Obj).spec.template.spec.containers[0].image, 'nginx:1.26');

      const listed = assertSucceeded(
        await run({ case: 'list', value: { kind: 'Deployment', namespace: 'demo', labelSelector: `app=${name}` } }),
        'list',
      );
      assert.deepEqual(
        listed.result!.objects.map((o) => (o as Obj).metadata.name),
        [name],
      );

      assertSucceeded(
        await run({
          case: 'patch',
          value: { kind: 'Deployment', namespace: 'demo', name, type: PatchType.MERGE, patch: '{"metadata":{"labels":{"patched":"yes"}}}' },
        }),
        'patch (merge)',
      );
      assert.equal(dep()!.metadata.labels.patched, 'yes');
      assertSucceeded(
        await run({
          case: 'patch',
          value: {
            kind: 'Deployment',
            namespace: 'demo',
            name,
            type: PatchType.JSON,
            patch: '[{"op":"add","path":"/metadata/labels/json","value":"yes"}]',
          },
        }),
        'patch (json)',
      );
      assert.equal(dep()!.metadata.labels.json, 'yes');

      assertSucceeded(await run({ case: 'scale', value: { kind: 'Deployment', namespace: 'demo', name, replicas: 4 } }), 'scale');
      assert.equal(dep()!.spec.replicas, 4);

      const history = assertSucceeded(await run({ case: 'history', value: { kind: 'Deployment', namespace: 'demo', name } }), 'history');
      assert.ok(history.result!.revisions.length >= 2, `two images → two revisions, got ${history.result!.revisions.length}`);

      assertSucceeded(
        await run({ case: 'rollout', value: { kind: 'Deployment', namespace: 'demo', name, action: RolloutAction.UNDO } }),
        'rollout undo',
      );
      assert.equal(dep()!.spec.template.spec.containers[0].image, 'nginx:1.25', 'undo goes back to the previous template');

      assertSucceeded(
        await run({ case: 'rollout', value: { kind: 'Deployment', namespace: 'demo', name, action: RolloutAction.PAUSE } }),
        'rollout pause',
      );
      assert.equal(dep()!.spec.paused, true);
      assertSucceeded(
        await run({ case: 'rollout', value: { kind: 'Deployment', namespace: 'demo', name, action: RolloutAction.RESUME } }),
        'rollout resume',
      );
      assert.ok(!dep()!.spec.paused);
      const generation = dep()!.metadata.generation;
      assertSucceeded(
        await run({ case: 'rollout', value: { kind: 'Deployment', namespace: 'demo', name, action: RolloutAction.RESTART } }),
        'rollout restart',
      );
      assert.ok(dep()!.spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt']);
      assert.equal(dep()!.metadata.generation, generation + 1);

      const pod = (store.list('v1', 'Pod', 'demo') as Obj[]).find((p) => p.metadata.labels?.app === 'web')!;
      const logs = assertSucceeded(
        await run({ case: 'logs', value: { namespace: 'demo', pod: pod.metadata.name, tailLines: 2n } }),
        'logs',
      );
      const lines = logs.result!.logs.split('\n').filter(Boolean);
      assert.ok(lines.length >= 1 && lines.length <= 2, `tail 2 → ${lines.length} lines`);

      const deleted = assertSucceeded(
        await run({
          case: 'delete',
          value: { kind: 'Deployment', namespace: 'demo', name, propagationPolicy: PropagationPolicy.FOREGROUND },
        }),
        'delete',
      );
      assert.deepEqual(deleted.result!.deleted, [`Deployment/demo/${name}`]);
      assert.equal(dep(), undefined, 'delete waits until the object is gone');
      assertFailed(await run({ case: 'get', value: { kind: 'Deployment', namespace: 'demo', name } }), 404, 'NotFound', 'get after delete');

      // History: REST pages newest first with a total, single records by id, and ListOperations by account.
      const page = await fetch(`${system.gateway.httpUrl}/armory/agent/operations?page=1&items=3`);
      assert.equal(page.status, 200);
      const body = (await page.json()) as { items: Obj[]; total: number };
      assert.equal(body.items.length, 3);
      assert.ok(body.total >= 8, `total ${body.total}`);
      // Newest first: the delete (the reads after it, as every get, list, logs and history, are not stored).
      assert.equal(body.items[0]!.type, 'delete', 'newest first');
      const all = await fetch(`${system.gateway.httpUrl}/armory/agent/operations?page=1&items=500`);
      const types = ((await all.json()) as { items: Obj[] }).items.map((o) => o.type);
      assert.deepEqual(
        types.filter((t) => ['get', 'list', 'logs', 'history'].includes(t)),
        [],
        'reads are not stored',
      );
      const one = await fetch(`${system.gateway.httpUrl}/armory/agent/operations/${created.id}`);
      assert.equal(one.status, 200);
      const oneJson = (await one.json()) as Obj;
      assert.equal(oneJson.state, 'OPERATION_STATE_SUCCEEDED');
      assert.equal(oneJson.result.statusCode, 201);
      const missing = await fetch(`${system.gateway.httpUrl}/armory/agent/operations/no-such-op`);
      assert.equal(missing.status, 404);
      assert.equal(((await missing.json()) as Obj).error, 'not_found');
      const listedOps = await client.raw.listOperations({ account: 'sandbox', state: OperationState.SUCCEEDED, pageSize: 500 });
      assert.ok(listedOps.operations.some((o) => o.id === created.id));
      assert.ok(listedOps.operations.every((o) => o.account === 'sandbox' && o.state === OperationState.SUCCEEDED));
    });

    test('failure paths come back faithfully: 403, 422, 400 InvalidManifest, 404, unknown account; conflicts are retried', async () => {
      const forbidden = assertFailed(
        await run({ case: 'apply', value: { manifests: configMapYaml('e2e-forbidden', 'demo', { a: '1' }) } }, 'restricted'),
        403,
        'Forbidden',
        'apply as the restricted user',
      );
      assert.match(forbidden.result!.message, /forbidden/i);
      assert.equal(system.sandbox.store.get('v1', 'ConfigMap', 'demo', 'e2e-forbidden'), undefined);
      // The restricted user may read ConfigMaps: the same account works for what RBAC allows.
      assertSucceeded(
        await run({ case: 'get', value: { kind: 'ConfigMap', namespace: 'demo', name: 'web-config' } }, 'restricted'),
        'get as restricted',
      );

      const invalid = assertFailed(
        await run({ case: 'apply', value: { manifests: deploymentYaml('e2e-invalid', 'nginx', 1, 'other') } }),
        422,
        'Invalid',
        'apply of a Deployment whose selector does not match its template',
      );
      assert.match(invalid.result!.message, /selector/);
      assert.equal(system.sandbox.store.get('apps/v1', 'Deployment', 'demo', 'e2e-invalid'), undefined);

      const notKube = assertFailed(
        await run({ case: 'apply', value: { manifests: 'foo: bar\n' } }),
        400,
        'InvalidManifest',
        'non-Kubernetes YAML',
      );
      assert.match(notKube.result!.message, /document/i);
      assertFailed(await run({ case: 'apply', value: { manifests: 'a: [unclosed\n' } }), 400, 'InvalidManifest', 'unparseable YAML');
      const second = assertFailed(
        await run({ case: 'apply', value: { manifests: `${configMapYaml('e2e-first-doc', 'demo', {})}---\nkind: ConfigMap\n` } }),
        400,
        'InvalidManifest',
        'second document without apiVersion/name',
      );
      assert.match(second.result!.message, /document 2/, 'the message names the bad document');

      assertFailed(
        await run({ case: 'get', value: { kind: 'ConfigMap', namespace: 'demo', name: 'no-such-config' } }),
        404,
        'NotFound',
        'get missing',
      );
      assertFailed(
        await run({ case: 'delete', value: { kind: 'ConfigMap', namespace: 'demo', name: 'no-such-config' } }),
        404,
        'NotFound',
        'delete missing',
      );
      assertFailed(await run({ case: 'get', value: { kind: 'Gizmo', namespace: 'demo', name: 'x' } }), 404, 'NotFound', 'unknown kind');

      await assert.rejects(
        run({ case: 'get', value: { kind: 'Pod', namespace: 'demo', name: 'x' } }, 'no-such-account'),
        (err: unknown) => {
          assert.ok(err instanceof ConnectError && err.code === Code.NotFound, String(err));
          return true;
        },
      );

      // Eight applies of the same new object race: one creates, the others hit 409 AlreadyExists and retry as updates.
      const racing = await Promise.all(
        Array.from({ length: 8 }, () => run({ case: 'apply', value: { manifests: configMapYaml('e2e-race', 'demo', { same: 'data' }) } })),
      );
      racing.forEach((r, i) => assertSucceeded(r, `racing apply ${i}`));
      assert.equal(racing.filter((r) => r.result!.statusCode === 201).length, 1, 'exactly one apply created the object');
      assert.deepEqual((system.sandbox.store.get('v1', 'ConfigMap', 'demo', 'e2e-race') as Obj).data, { same: 'data' });

      // Server-side apply: a field owned by another manager is a 409 Conflict unless forced.
      const ssa = (manager: string, value: string, force = false) =>
        run({
          case: 'apply',
          value: {
            manifests: configMapYaml('e2e-ssa', 'demo', { owned: value }),
            serverSide: true,
            fieldManager: manager,
            forceConflicts: force,
          },
        });
      assertSucceeded(await ssa('first', 'a'), 'server-side apply by first');
      assertFailed(await ssa('second', 'b'), 409, 'Conflict', 'server-side apply conflict');
      assertSucceeded(await ssa('second', 'b', true), 'forced server-side apply');
      assert.deepEqual((system.sandbox.store.get('v1', 'ConfigMap', 'demo', 'e2e-ssa') as Obj).data, { owned: 'b' });
    });

    test('bad input gets typed errors and stores nothing: unknown oneof, no spec, empty/oversized manifest, timeout 0, bad id', async () => {
      const before = await restTotal(system);
      const cases: [string, string, string][] = [
        ['unknown oneof', JSON.stringify({ account: 'sandbox', frobnicate: { kind: 'Pod' } }), 'invalid_argument'],
        ['no spec', JSON.stringify({ account: 'sandbox' }), 'invalid_argument'],
        ['no account', JSON.stringify({ get: { kind: 'Pod', name: 'x' } }), 'invalid_argument'],
        ['empty manifest', JSON.stringify({ account: 'sandbox', apply: { manifests: ' \n' } }), 'invalid_argument'],
        [
          'oversized manifest',
          JSON.stringify({ account: 'sandbox', apply: { manifests: `# ${'x'.repeat(1024 * 1024)}\n` } }),
          'invalid_argument',
        ],
        ['timeout 0', JSON.stringify({ account: 'sandbox', timeout: '0s', get: { kind: 'Pod', name: 'x' } }), 'invalid_argument'],
        ['timeout over 1h', JSON.stringify({ account: 'sandbox', timeout: '3601s', get: { kind: 'Pod', name: 'x' } }), 'invalid_argument'],
        ['bad id', JSON.stringify({ account: 'sandbox', id: 'white space', get: { kind: 'Pod', name: 'x' } }), 'invalid_argument'],
        ['not JSON', '{"account": ', 'invalid_argument'],
        [
          'over the 4 MiB message limit',
          JSON.stringify({ account: 'sandbox', apply: { manifests: 'x'.repeat(5 * 1024 * 1024) } }),
          'resource_exhausted',
        ],
      ];
      for (const [what, body, code] of cases) {
        const { status, json } = await submitJson(system, body);
        assert.ok(status >= 400 && status < 500, `${what}: HTTP ${status} ${JSON.stringify(json)}`);
        assert.equal(json.code, code, `${what}: ${JSON.stringify(json)}`);
        assert.ok(typeof json.message === 'string' && json.message.length > 0, `${what}: a message`);
      }
      assert.equal(await restTotal(system), before, 'no bad request stored an operation');

      // Same id again: same request → same operation (not run twice); a different request → ALREADY_EXISTS.
      const spec: Spec = {
        case: 'patch',
        value: { kind: 'ConfigMap', namespace: 'demo', name: 'web-config', type: PatchType.MERGE, patch: '{"data":{"e2e":"idempotent"}}' },
      };
      const first = assertSucceeded(await run(spec, 'sandbox', { id: 'e2e-idempotent' }), 'first submit');
      const again = assertSucceeded(await run(spec, 'sandbox', { id: 'e2e-idempotent' }), 'retried submit');
      assert.equal(again.id, first.id);
      assert.equal(again.resultAt?.seconds, first.resultAt?.seconds);
      await assert.rejects(
        run({ ...spec, value: { ...spec.value, name: 'other' } } as Spec, 'sandbox', { id: 'e2e-idempotent' }),
        (err: unknown) => {
          assert.ok(err instanceof ConnectError && err.code === Code.AlreadyExists, String(err));
          return true;
        },
      );
    });

    test('the outpost CLI runs every command against the real gateway with kubectl-like output and exit codes 0/1/2/3', async () => {
      const env = { OUTPOST_GATEWAY: system.gateway.httpUrl, OUTPOST_LOG_LEVEL: 'warn' };
      const cm = join(system.dir, 'cli-cm.yaml');
      writeFileSync(cm, configMapYaml('e2e-cli', 'demo', { from: 'cli' }));
      const empty = join(system.dir, 'empty.yaml');
      writeFileSync(empty, '\n');
      const a = ['--account', 'sandbox'];

      // The real binary as a child process, once per exit code (each start costs a second or more of CPU).
      const applied = await outpost(['apply', '-f', cm, ...a], env);
      assert.equal(applied.code, 0, applied.stderr);
      assert.equal(applied.stdout, 'configmap/e2e-cli created\n');
      const [missing, emptyManifest, unreachable] = await Promise.all([
        outpost(['get', 'cm', 'e2e-cli-missing', '-n', 'demo', ...a], env),
        outpost(['apply', '-f', empty, ...a], env),
        outpost(['get', 'pods', ...a, '--gateway', 'http://127.0.0.1:1'], env),
      ]);
      assert.equal(missing.code, 1, missing.stderr);
      assert.match(missing.stderr, /^error: NotFound: .*"e2e-cli-missing".*\(HTTP 404\)\n$/);
      assert.equal(emptyManifest.code, 2, emptyManifest.stderr);
      assert.match(emptyManifest.stderr, /^error: InvalidArgument: .*empty.*\(HTTP 400\)\n$/);
      assert.equal(unreachable.code, 3);
      assert.match(unreachable.stderr, /^error: cannot reach the gateway at http:\/\/127\.0\.0\.1:1 /);

      // Every other command in-process (same code as the binary, no process start-up) against the same gateway.
      const cli = (...args: string[]) => runCli([...args, '--gateway', system.gateway.httpUrl]);
      const asJson = await cli('get', 'configmap', 'e2e-cli', '-n', 'demo', '-o', 'json', ...a);
      assert.equal(asJson.code, 0, asJson.err);
      assert.deepEqual(JSON.parse(asJson.out).data, { from: 'cli' });
      const table = await cli('get', 'deploy', '-n', 'demo', ...a);
      assert.equal(table.code, 0, table.err);
      assert.match(table.out, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\n/);
      assert.match(table.out, /\nweb\s+\d+\/\d+/);
      const scaled = await cli('scale', 'deployment/web', '--replicas', '3', '-n', 'demo', ...a);
      assert.equal(scaled.code, 0, scaled.err);
      assert.equal(scaled.out, 'deployment.apps/web scaled\n');
      assert.equal((system.sandbox.store.get('apps/v1', 'Deployment', 'demo', 'web') as Obj).spec.replicas, 3);
      const restarted = await cli('rollout', 'restart', 'deploy/web', '-n', 'demo', ...a);
      assert.equal(restarted.code, 0, restarted.err);
      assert.equal(restarted.out, 'deployment.apps/web restarted\n');
      const history = await cli('rollout', 'history', 'deployment.apps/web', '-n', 'demo', ...a);
      assert.equal(history.code, 0, history.err);
      assert.match(history.out, /^deployment\.apps\/web\nREVISION\s+CHANGE-CAUSE\n1\s/);
      const cmNew = join(system.dir, 'cli-cm-new.yaml');
      writeFileSync(cmNew, configMapYaml('e2e-cli-restricted', 'demo', { from: 'cli' }));
      const forbidden = await cli('apply', '-f', cmNew, '--account', 'restricted');
      assert.equal(forbidden.code, 1);
      assert.match(forbidden.err, /^error: Forbidden: .*\(HTTP 403\)\n$/);
      const noAccount = await cli('get', 'pods', '--account', 'no-such-account');
      assert.equal(noAccount.code, 1);
      assert.match(noAccount.err, /^error: NotFound: .*no-such-account.*\(HTTP 404\)\n$/);
      const noWait = await cli('scale', 'deploy/web', '-n', 'demo', '--replicas', '3', '--no-wait', '--id', 'e2e-cli-nowait', ...a);
      assert.equal(noWait.code, 0, noWait.err);
      assert.equal(noWait.out, 'e2e-cli-nowait\n');
      assertSucceeded(await client.waitFor('e2e-cli-nowait', 20_000), '--no-wait operation');
      const readNoWait = await cli('get', 'configmap/web-config', '-n', 'demo', '--no-wait', ...a);
      assert.equal(readNoWait.code, 2, 'a read is not stored: there is no id to wait for');
      // The restart above rolls web's pods over, old ones deleted as new ones get ready (within maxSurge and
      // maxUnavailable, as Kubernetes does): read the logs of a pod of the finished rollout, which stays.
      const pod = await eventually('the restart rolled out', () => {
        const web = system.sandbox.store.get('apps/v1', 'Deployment', 'demo', 'web') as Obj;
        const st = web.status ?? {};
        const done =
          st.observedGeneration === web.metadata.generation && st.replicas === 3 && st.updatedReplicas === 3 && st.availableReplicas === 3;
        return done ? (system.sandbox.store.list('v1', 'Pod', 'demo') as Obj[]).find((p) => p.metadata.labels?.app === 'web') : undefined;
      });
      const logs = await cli('logs', pod.metadata.name, '-n', 'demo', '--tail', '1', ...a);
      assert.equal(logs.code, 0, logs.err);
      assert.equal(logs.out.split('\n').filter(Boolean).length, 1);
      const deleted = await cli('delete', 'cm', 'e2e-cli', '-n', 'demo', ...a);
      assert.equal(deleted.code, 0, deleted.err);
      assert.equal(deleted.out, 'configmap "e2e-cli" deleted from demo namespace\n');
      assert.equal(system.sandbox.store.get('v1', 'ConfigMap', 'demo', 'e2e-cli'), undefined);
      // A cluster that does not answer: the operation times out and the CLI says so (exit 1).
      system.sandbox.faults.pause();
      let timedOut;
      try {
        timedOut = await cli('get', 'pods', '-n', 'demo', ...a, '--timeout', '1s');
      } finally {
        system.sandbox.faults.resume();
      }
      assert.equal(timedOut.code, 1, `${timedOut.out}${timedOut.err}`);
      // The gateway's deadline ("after 1s") or the agent's own ("after 999 ms", the time left when it started) may fire first.
      assert.match(timedOut.err, /^error: Timeout: .*timed out after (1s|\d+ ms)/);
    });

    test('cutting the agent connection mid-operation: every operation ends terminal and its effect happens at most once', async () => {
      const { store, faults } = system.sandbox;
      const names = ['e2e-cut-0', 'e2e-cut-1', 'e2e-cut-2'];
      for (const name of names) store.create(JSON.parse(JSON.stringify(yamlDeployment(name))));
      await sleep(100);
      const generations = names.map((n) => (store.get('apps/v1', 'Deployment', 'demo', n) as Obj).metadata.generation as number);

      // Hold every Kubernetes call so the operations are certainly in flight in the agent when the stream is cut.
      faults.pause();
      let resumed = false;
      try {
        for (const [i, name] of names.entries()) {
          await client.submit({
            account: 'sandbox',
            id: `e2e-cut-op-${i}`,
            timeout: { seconds: 25n },
            spec: { case: 'rollout', value: { kind: 'Deployment', namespace: 'demo', name, action: RolloutAction.RESTART } },
          });
        }
        const deadline = Date.now() + 30_000;
        for (const i of names.keys()) {
          for (;;) {
            const { operation } = await client.raw.getOperation({ id: `e2e-cut-op-${i}` });
            if (operation!.state === OperationState.SENT) break;
            assert.ok(Date.now() < deadline, `operation ${i} was never sent: ${OperationState[operation!.state]}`);
            await sleep(20);
          }
        }
        await sleep(300); // the agent has received them and waits on the paused API server
        system.proxy.cutAll();
        await sleep(200);
        faults.resume();
        resumed = true;
      } finally {
        if (!resumed) faults.resume();
      }

      const finals = await Promise.all(names.map((_, i) => client.waitFor(`e2e-cut-op-${i}`, 40_000)));
      for (const [i, record] of finals.entries()) {
        assert.ok(
          [OperationState.SUCCEEDED, OperationState.FAILED, OperationState.TIMED_OUT].includes(record.state),
          `operation ${i} ended ${OperationState[record.state]}`,
        );
        const generation = (store.get('apps/v1', 'Deployment', 'demo', names[i]!) as Obj).metadata.generation as number;
        assert.ok(generation - generations[i]! <= 1, `${names[i]}: restarted ${generation - generations[i]!} times`);
        if (record.state === OperationState.SUCCEEDED) assert.equal(generation, generations[i]! + 1, `${names[i]} restarted once`);
      }
      // The agent reconnected: later operations run normally and the stored results are not re-run on redelivery.
      assertSucceeded(await run({ case: 'get', value: { kind: 'Deployment', namespace: 'demo', name: names[0]! } }), 'get after the cut');
      await sleep(500);
      for (const [i, name] of names.entries()) {
        const generation = (store.get('apps/v1', 'Deployment', 'demo', name) as Obj).metadata.generation as number;
        assert.ok(generation - generations[i]! <= 1, `${name}: restarted again after reconnecting`);
      }
    });

    test('200 concurrent operations across three accounts all end terminal with correct results', async () => {
      const { store } = system.sandbox;
      const accounts = ['sandbox', 'second', 'third'];
      const jobs = Array.from({ length: 200 }, (_, i) => {
        const account = accounts[i % accounts.length]!;
        switch (i % 4) {
          case 0:
            return {
              i,
              kind: 'apply',
              account,
              spec: { case: 'apply', value: { manifests: configMapYaml(`e2e-conc-${i}`, 'demo-backend', { i: String(i) }) } } as Spec,
            };
          case 1:
            return {
              i,
              kind: 'get',
              account,
              spec: { case: 'get', value: { kind: 'ConfigMap', namespace: 'demo', name: 'web-config' } } as Spec,
            };
          case 2:
            return {
              i,
              kind: 'list',
              account,
              spec: { case: 'list', value: { kind: 'ConfigMap', namespace: 'demo-backend', labelSelector: '' } } as Spec,
            };
          default:
            return {
              i,
              kind: 'missing',
              account,
              spec: { case: 'get', value: { kind: 'ConfigMap', namespace: 'demo', name: `e2e-missing-${i}` } } as Spec,
            };
        }
      });
      // A generous timeout: 200 operations at once take a while on a loaded machine.
      const records = await Promise.all(jobs.map((job) => run(job.spec, job.account, { timeout: { seconds: 120n } })));
      for (const [n, record] of records.entries()) {
        const job = jobs[n]!;
        assert.equal(record.account, job.account);
        if (job.kind === 'missing') {
          assertFailed(record, 404, 'NotFound', `#${job.i} get missing`);
          continue;
        }
        assertSucceeded(record, `#${job.i} ${job.kind} on ${job.account}`);
        if (job.kind === 'apply') {
          assert.equal((record.result!.objects[0] as Obj).metadata.name, `e2e-conc-${job.i}`);
          assert.deepEqual((store.get('v1', 'ConfigMap', 'demo-backend', `e2e-conc-${job.i}`) as Obj).data, { i: String(job.i) });
        } else if (job.kind === 'get') {
          assert.equal((record.result!.objects[0] as Obj).metadata.name, 'web-config');
        } else {
          assert.ok(record.result!.objects.some((o) => (o as Obj).metadata.name === 'api-config'));
        }
      }
      const agents = new Set(records.map((r) => r.agentId));
      assert.deepEqual([...agents].sort(), ['agent-1', 'agent-2', 'agent-3']);
      const created = (store.list('v1', 'ConfigMap', 'demo-backend') as Obj[]).filter((c) => c.metadata.name.startsWith('e2e-conc-'));
      assert.equal(created.length, 50);
    });
  });
}

/** A Deployment object for the store (bypassing the API). */
function yamlDeployment(name: string): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'demo', labels: { app: name } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx' }] } },
    },
  };
}
