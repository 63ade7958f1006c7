/**
 * The operation commands against a fake OperationService on a real socket: what each command line submits, what it
 * prints (kubectl's words), and the exit codes a shell user relies on (0 ok, 1 failed/timed out, 2 usage or bad
 * input, 3 gateway unreachable).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { PatchType, PropagationPolicy, RolloutAction } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { OperationRecordSchema, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { failedRecord, runCli, startFakeGateway, succeededRecord, type FakeGateway } from './operations-helpers.js';

const deployment = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'demo', creationTimestamp: new Date(Date.now() - 90_000).toISOString() },
  spec: { replicas: 3, template: { spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
  status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
  ...extra,
});

describe('operation commands (fake gateway)', () => {
  let gw: FakeGateway;
  let dir: string;
  const cli = (...args: string[]) => runCli([...args, '--gateway', gw.url]);
  before(async () => {
    gw = await startFakeGateway();
    dir = mkdtempSync(join(tmpdir(), 'outpost-cli-'));
  });
  after(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    gw.requests.length = 0;
    gw.waits.length = 0;
    gw.respond = (req) => succeededRecord(req);
    gw.waitStream = () => [];
  });

  test("apply -f FILE submits the manifests with every flag and waits; prints the agent's word for each object", async () => {
    const file = join(dir, 'web.yaml');
    writeFileSync(file, 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n');
    gw.respond = (req) => succeededRecord(req, { statusCode: 201, objects: [deployment('web')] });
    const r = await cli(
      'apply',
      '-f',
      file,
      '--account',
      'prod',
      '-n',
      'demo',
      '--server-side',
      '--force-conflicts',
      '--field-manager',
      'me',
      '--timeout',
      '2m',
      '--id',
      'retry-1',
    );
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'deployment.apps/web created\n');
    const req = gw.requests[0]!;
    assert.equal(req.account, 'prod');
    assert.equal(req.id, 'retry-1');
    assert.equal(req.wait, true);
    assert.equal(req.timeout?.seconds, 120n);
    assert.equal(req.spec.case, 'apply');
    assert.deepEqual(
      { ...req.spec.value, $typeName: undefined },
      {
        $typeName: undefined,
        manifests: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n',
        serverSide: true,
        forceConflicts: true,
        fieldManager: 'me',
        namespace: 'demo',
        replace: false,
      },
    );

    gw.respond = (req) =>
      succeededRecord(req, {
        statusCode: 200,
        objects: [deployment('web'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' } }],
      });
    const again = await cli('apply', '-f', file, '--account', 'prod');
    assert.equal(
      again.out,
      'deployment.apps/web configured\nconfigmap/cfg configured\n',
      'an agent that reports no actions: the whole operation decides',
    );
    assert.equal(gw.requests[1]!.timeout, undefined, 'no --timeout leaves the gateway default');
    assert.equal(gw.requests[1]!.id, '');

    gw.respond = (req) =>
      succeededRecord(req, {
        statusCode: 200,
        objects: [deployment('web'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' } }, deployment('api')],
        actions: ['unchanged', 'created', 'serverside-applied'],
      });
    const perObject = await cli('apply', '-f', file, '--account', 'prod');
    assert.equal(
      perObject.out,
      'deployment.apps/web unchanged\nconfigmap/cfg created\ndeployment.apps/api serverside-applied\n',
      "each object gets the agent's word for it",
    );
  });

  test('apply reads stdin with -f -, joins several files as YAML documents, and reads a directory', async () => {
    const fromStdin = await runCli(['apply', '-f', '-', '--account', 'a', '--gateway', gw.url], {
      stdin: 'kind: ConfigMap\nmetadata: {name: c}\n',
    });
    assert.equal(fromStdin.code, 0, fromStdin.err);
    assert.equal((gw.requests.at(-1)!.spec.value as { manifests: string }).manifests, 'kind: ConfigMap\nmetadata: {name: c}\n');

    const sub = join(dir, 'many');
    mkdirSync(sub);
    writeFileSync(join(sub, 'a.yaml'), 'kind: ConfigMap\nmetadata: {name: a}\n');
    writeFileSync(join(sub, 'b.json'), '{"kind": "ConfigMap", "metadata": {"name": "b"}}\n');
    writeFileSync(join(sub, 'notes.txt'), 'not a manifest');
    const joined = await cli('apply', '-f', join(sub, 'a.yaml'), '-f', join(sub, 'b.json'), '--account', 'a');
    assert.equal(joined.code, 0, joined.err);
    assert.equal(
      (gw.requests.at(-1)!.spec.value as { manifests: string }).manifests,
      'kind: ConfigMap\nmetadata: {name: a}\n---\n{"kind": "ConfigMap", "metadata": {"name": "b"}}',
    );
    const fromDir = await cli('apply', '-f', sub, '--account', 'a');
    assert.equal(fromDir.code, 0, fromDir.err);
    assert.equal(
      (gw.requests.at(-1)!.spec.value as { manifests: string }).manifests,
      'kind: ConfigMap\nmetadata: {name: a}\n---\n{"kind": "ConfigMap", "metadata": {"name": "b"}}',
    );
  });

  test('apply with an unreadable file, an oversized manifest or --force-conflicts alone exits 2 and submits nothing', async () => {
    const missing = await cli('apply', '-f', join(dir, 'nope.yaml'), '--account', 'a');
    assert.equal(missing.code, 2);
    assert.match(missing.err, /^error: cannot read .*nope\.yaml: no such file or directory/);
    const big = join(dir, 'big.yaml');
    writeFileSync(big, `kind: ConfigMap\nmetadata: {name: big}\ndata: {k: "${'x'.repeat(1024 * 1024)}"}\n`);
    const oversized = await cli('apply', '-f', big, '--account', 'a');
    assert.equal(oversized.code, 2);
    assert.match(oversized.err, /limit is 1048576 bytes/);
    writeFileSync(join(dir, 'ok.yaml'), 'kind: ConfigMap\nmetadata: {name: ok}\n');
    const force = await cli('apply', '-f', join(dir, 'ok.yaml'), '--account', 'a', '--force-conflicts');
    assert.equal(force.code, 2);
    assert.match(force.err, /--force-conflicts only applies with --server-side/);
    assert.equal(gw.requests.length, 0);
  });

  test('apply checks every document as delete -f does: no kind or no metadata.name exits 2 naming it, nothing sent', async () => {
    const file = join(dir, 'unnamed.yaml');
    writeFileSync(file, 'kind: ConfigMap\nmetadata: {name: fine}\n---\nkind: ConfigMap\nmetadata: {namespace: demo}\n');
    for (const verb of ['apply', 'delete']) {
      const r = await cli(verb, '-f', file, '--account', 'a');
      assert.deepEqual([r.code, r.err], [2, `error: ${file}: document 2: ConfigMap has no metadata.name\n`], verb);
    }
    const noKind = await runCli(['apply', '-f', '-', '--account', 'a', '--gateway', gw.url], { stdin: 'metadata: {name: x}\n' });
    assert.deepEqual([noKind.code, noKind.err], [2, 'error: stdin: document 1: object has no kind\n']);
    assert.equal(gw.requests.length, 0);
  });

  test('delete accepts KIND/NAME, KIND NAME and -l, maps --cascade and --grace-period, prints kubectl lines', async () => {
    gw.respond = (req) => succeededRecord(req, { deleted: ['Deployment/demo/web'] });
    const byName = await cli(
      'delete',
      'deployment.apps/web',
      '--account',
      'a',
      '-n',
      'demo',
      '--cascade',
      'foreground',
      '--grace-period',
      '5',
    );
    assert.equal(byName.code, 0, byName.err);
    assert.equal(byName.out, 'deployment.apps "web" deleted from demo namespace\n');
    const spec = gw.requests[0]!.spec;
    assert.equal(spec.case, 'delete');
    assert.equal(spec.value.kind, 'Deployment');
    assert.equal(spec.value.apiVersion, '');
    assert.equal(spec.value.name, 'web');
    assert.equal(spec.value.namespace, 'demo');
    assert.equal(spec.value.propagationPolicy, PropagationPolicy.FOREGROUND);
    assert.equal(spec.value.gracePeriodSeconds, 5n);

    gw.respond = (req) => succeededRecord(req, { deleted: ['ConfigMap/default/a', 'ConfigMap/default/b'] });
    const bySelector = await cli('delete', 'cm', '-l', 'app=web', '--account', 'a');
    assert.equal(bySelector.out, 'configmap "a" deleted from default namespace\nconfigmap "b" deleted from default namespace\n');
    const sel = gw.requests[1]!.spec;
    assert.equal(sel.case === 'delete' && sel.value.labelSelector, 'app=web');
    assert.equal(sel.case === 'delete' && sel.value.propagationPolicy, PropagationPolicy.BACKGROUND);
    assert.equal(sel.case === 'delete' && sel.value.gracePeriodSeconds, undefined);

    gw.respond = (req) => succeededRecord(req, { deleted: ['Namespace/tmp'] });
    const ns = await cli('delete', 'ns', 'tmp', '--account', 'a', '--cascade', 'orphan');
    assert.equal(ns.out, 'namespace "tmp" deleted\n');
    const nsSpec = gw.requests[2]!.spec;
    assert.equal(nsSpec.case === 'delete' && nsSpec.value.namespace, '', 'cluster-scoped kinds send no namespace');
    assert.equal(nsSpec.case === 'delete' && nsSpec.value.propagationPolicy, PropagationPolicy.ORPHAN);

    gw.respond = (req) => succeededRecord(req, { deleted: [] });
    assert.equal((await cli('delete', 'pods', '-l', 'x=y', '--account', 'a')).out, 'No resources found\n');
  });

  test('delete without a name or selector, with both, or with a bad cascade exits 2', async () => {
    for (const args of [
      ['delete', 'deployment', '--account', 'a'],
      ['delete', 'deployment/web', '-l', 'a=b', '--account', 'a'],
      ['delete', 'deployment/web', 'again', '--account', 'a'],
      ['delete', 'deployment/web', '--cascade', 'sometimes', '--account', 'a'],
      ['delete', 'deployment/web', '--grace-period', 'soon', '--account', 'a'],
      ['delete', 'gizmos/x', '--account', 'a'],
    ]) {
      const r = await cli(...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, /error: /);
    }
    assert.equal(gw.requests.length, 0);
  });

  test('patch sends its type and the patch as compact JSON; cluster-scoped kinds send no namespace', async () => {
    gw.respond = (req) => succeededRecord(req, { objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tmp' } }] });
    const r = await cli('patch', 'ns/tmp', '--type', 'merge', '-p', 'metadata:\n  labels: {team: a}\n', '-n', 'demo', '--account', 'a');
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'namespace/tmp patched\n');
    const spec = gw.requests[0]!.spec;
    assert.equal(spec.case, 'patch');
    assert.equal(spec.case === 'patch' && spec.value.type, PatchType.MERGE);
    assert.equal(spec.case === 'patch' && spec.value.patch, '{"metadata":{"labels":{"team":"a"}}}');
    assert.equal(spec.case === 'patch' && spec.value.namespace, '');
    await cli('patch', 'deploy', 'web', '-p', '{"spec":{"replicas":1}}', '--account', 'a');
    const strategic = gw.requests[1]!.spec;
    assert.equal(strategic.case === 'patch' && strategic.value.type, PatchType.STRATEGIC);
    assert.equal(strategic.case === 'patch' && strategic.value.namespace, 'default');
  });

  test('delete -f sends one delete per object (List items too) with its own namespace, -n or default', async () => {
    const file = join(dir, 'to-delete.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: List',
        'items:',
        '- {apiVersion: v1, kind: ConfigMap, metadata: {name: one, namespace: elsewhere}}',
        '- {apiVersion: apps/v1, kind: Deployment, metadata: {name: two}}',
        '---',
        'apiVersion: v1',
        'kind: Namespace',
        'metadata: {name: three}',
        '---',
        '',
      ].join('\n'),
    );
    gw.respond = (req) => succeededRecord(req, { deleted: [] });
    const r = await cli('delete', '-f', file, '-n', 'demo', '--account', 'a', '--cascade', 'orphan');
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(
      gw.requests.map(
        (req) =>
          req.spec.case === 'delete' && [req.spec.value.apiVersion, req.spec.value.kind, req.spec.value.namespace, req.spec.value.name],
      ),
      [
        ['v1', 'ConfigMap', 'elsewhere', 'one'],
        ['apps/v1', 'Deployment', 'demo', 'two'],
        ['v1', 'Namespace', '', 'three'],
      ],
    );
    assert.ok(gw.requests.every((req) => req.spec.case === 'delete' && req.spec.value.propagationPolicy === PropagationPolicy.ORPHAN));
  });

  test('scale and rollout submit the right spec and print the resulting object', async () => {
    gw.respond = (req) => succeededRecord(req, { objects: [deployment('web')] });
    const scaled = await cli('scale', 'deploy/web', '--replicas', '5', '--account', 'a', '-n', 'demo');
    assert.equal(scaled.code, 0, scaled.err);
    assert.equal(scaled.out, 'deployment.apps/web scaled\n');
    const s = gw.requests[0]!.spec;
    assert.deepEqual(s.case === 'scale' && [s.value.kind, s.value.namespace, s.value.name, s.value.replicas], [
      'Deployment',
      'demo',
      'web',
      5,
    ]);

    gw.respond = (req) => succeededRecord(req, { objects: [{ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web' } }] });
    assert.equal((await cli('scale', 'statefulset', 'db', '--replicas', '0', '--account', 'a')).out, 'statefulset.apps/db scaled\n');

    gw.respond = (req) => succeededRecord(req, { objects: [deployment('web')] });
    const undo = await cli('rollout', 'undo', 'deployment/web', '--to-revision', '2', '--account', 'a');
    assert.equal(undo.out, 'deployment.apps/web rolled back\n');
    const u = gw.requests[2]!.spec;
    assert.deepEqual(u.case === 'rollout' && [u.value.action, u.value.toRevision, u.value.namespace], [RolloutAction.UNDO, 2n, 'default']);
    for (const [verb, action, printed] of [
      ['pause', RolloutAction.PAUSE, 'paused'],
      ['resume', RolloutAction.RESUME, 'resumed'],
      ['restart', RolloutAction.RESTART, 'restarted'],
    ] as const) {
      const r = await cli('rollout', verb, 'deployments', 'web', '--account', 'a');
      assert.equal(r.out, `deployment.apps/web ${printed}\n`);
      const spec = gw.requests.at(-1)!.spec;
      assert.equal(spec.case === 'rollout' && spec.value.action, action);
    }
  });

  test('rollout history prints a REVISION / CHANGE-CAUSE table; bad rollout lines exit 2', async () => {
    gw.respond = (req) =>
      succeededRecord(req, {
        revisions: [
          { revision: 2n, name: 'web-2', changeCause: 'image bump' },
          { revision: 1n, name: 'web-1' },
        ],
      });
    const r = await cli('rollout', 'history', 'deploy/web', '--account', 'a');
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'deployment.apps/web\nREVISION  CHANGE-CAUSE\n1         <none>\n2         image bump\n');
    assert.equal(gw.requests[0]!.spec.case, 'history');
    for (const args of [
      ['rollout', 'explode', 'deploy/web', '--account', 'a'],
      ['rollout', 'pause', 'deploy', '--account', 'a'],
      ['rollout', 'pause', 'deploy/web', '--to-revision', '1', '--account', 'a'],
    ]) {
      assert.equal((await cli(...args)).code, 2, args.join(' '));
    }
    assert.equal(gw.requests.length, 1);
  });

  test('get by name prints a table, -o json the object, -o yaml, -o name; a listing sends selectors', async () => {
    gw.respond = (req) => succeededRecord(req, { objects: [deployment('web')] });
    const table = await cli('get', 'deployment', 'web', '--account', 'a', '-n', 'demo');
    assert.equal(table.code, 0, table.err);
    assert.equal(table.out, 'NAME   READY   UP-TO-DATE   AVAILABLE   AGE\nweb    2/3     3            2           90s\n');
    const g = gw.requests[0]!.spec;
    assert.deepEqual(g.case === 'get' && [g.value.kind, g.value.namespace, g.value.name], ['Deployment', 'demo', 'web']);

    const json = await cli('get', 'deploy/web', '--account', 'a', '-o', 'json');
    assert.equal(JSON.parse(json.out).metadata.name, 'web');
    const yaml = await cli('get', 'deploy/web', '--account', 'a', '-o', 'yaml');
    assert.match(yaml.out, /^apiVersion: apps\/v1\nkind: Deployment\n/);
    assert.equal((await cli('get', 'deploy/web', '--account', 'a', '-o', 'name')).out, 'deployment.apps/web\n');
    const wide = await cli('get', 'deploy/web', '--account', 'a', '-o', 'wide');
    assert.match(wide.out, /IMAGES/);
    assert.match(wide.out, /nginx:1\.27/);

    gw.respond = (req) => succeededRecord(req, { objects: [deployment('a'), deployment('b')] });
    const list = await cli(
      'get',
      'deployments',
      '-A',
      '-l',
      'app=web',
      '--field-selector',
      'metadata.name=a',
      '--account',
      'a',
      '-o',
      'json',
    );
    const parsed = JSON.parse(list.out);
    assert.equal(parsed.kind, 'List');
    assert.equal(parsed.items.length, 2);
    const l = gw.requests.at(-1)!.spec;
    assert.deepEqual(l.case === 'list' && [l.value.namespace, l.value.labelSelector, l.value.fieldSelector], [
      '',
      'app=web',
      'metadata.name=a',
    ]);

    gw.respond = (req) => succeededRecord(req, { objects: [] });
    const empty = await cli('get', 'pods', '--account', 'a', '-n', 'demo');
    assert.equal(empty.code, 0);
    assert.equal(empty.out, '');
    assert.equal(empty.err, 'No resources found in demo namespace.\n');
    const nsList = await cli('get', 'namespaces', '--account', 'a');
    assert.equal(gw.requests.at(-1)!.spec.case === 'list' && (gw.requests.at(-1)!.spec.value as { namespace: string }).namespace, '');
    assert.equal(nsList.code, 0);
  });

  test('logs sends pod, container and tail and prints the text; pod/NAME accepted, other kinds refused', async () => {
    gw.respond = (req) => succeededRecord(req, { logs: 'line 1\nline 2' });
    const r = await cli('logs', 'pod/web-1', '-c', 'nginx', '--tail', '2', '--account', 'a', '-n', 'demo');
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'line 1\nline 2\n');
    const s = gw.requests[0]!.spec;
    assert.deepEqual(s.case === 'logs' && [s.value.pod, s.value.container, s.value.tailLines, s.value.namespace], [
      'web-1',
      'nginx',
      2n,
      'demo',
    ]);
    assert.equal((await cli('logs', 'deploy/web', '--account', 'a')).code, 2);
  });

  test('a failed operation exits 1 with "error: <reason>: <message> (HTTP <status>)"', async () => {
    gw.respond = (req) =>
      failedRecord(req, OperationState.FAILED, { statusCode: 404, reason: 'NotFound', message: 'deployments.apps "nope" not found' });
    const notFound = await cli('get', 'deploy/nope', '--account', 'a');
    assert.equal(notFound.code, 1);
    assert.equal(notFound.out, '');
    assert.equal(notFound.err, 'error: NotFound: deployments.apps "nope" not found (HTTP 404)\n');

    gw.respond = (req) => failedRecord(req, OperationState.FAILED, undefined, 'no agent connected for account a');
    const noAgent = await cli('get', 'pods', '--account', 'a');
    assert.equal(noAgent.code, 1);
    assert.equal(noAgent.err, 'error: Failed: no agent connected for account a\n');

    gw.respond = (req) => failedRecord(req, OperationState.TIMED_OUT, undefined, 'timed out after 1s (sent to agent agent-1)');
    const timedOut = await cli('get', 'pods', '--account', 'a', '--timeout', '1s');
    assert.equal(timedOut.code, 1);
    assert.equal(timedOut.err, 'error: Timeout: timed out after 1s (sent to agent agent-1)\n');
  });

  test('gateway errors: InvalidArgument and ResourceExhausted exit 2, NotFound and AlreadyExists exit 1', async () => {
    for (const [code, exit, http] of [
      [Code.InvalidArgument, 2, 400],
      [Code.ResourceExhausted, 2, 429],
      [Code.NotFound, 1, 404],
      [Code.AlreadyExists, 1, 409],
      [Code.Internal, 1, 500],
    ] as const) {
      gw.respond = () => {
        throw new ConnectError('told you so', code);
      };
      const r = await cli('get', 'pods', '--account', 'a');
      assert.equal(r.code, exit, `${Code[code]}: ${r.err}`);
      assert.match(r.err, new RegExp(`^error: \\w+: told you so \\(HTTP ${http}\\)\\n$`));
    }
  });

  test('--no-wait prints only the id (not for reads: they are not stored); a non-terminal answer falls back to WaitOperation', async () => {
    gw.respond = (req) => create(OperationRecordSchema, { id: 'op-42', account: req.account, state: OperationState.PENDING });
    const noWait = await cli('scale', 'deploy/web', '--replicas', '2', '--account', 'a', '--no-wait');
    assert.equal(noWait.code, 0, noWait.err);
    assert.equal(noWait.out, 'op-42\n');
    assert.equal(gw.requests[0]!.wait, false);
    for (const args of [
      ['get', 'pods'],
      ['get', 'pod', 'p'],
      ['logs', 'p'],
      ['rollout', 'history', 'deploy/web'],
    ]) {
      const read = await cli(...args, '--account', 'a', '--no-wait');
      assert.equal(read.code, 2, `${args.join(' ')}: ${read.err}`);
      assert.match(read.err, /--no-wait does not apply to (get|list|logs|history): a read is not stored/);
    }
    assert.equal(gw.requests.length, 1, 'a refused read sends nothing');

    gw.waitStream = (id) => [
      create(OperationRecordSchema, { id, state: OperationState.SENT }),
      succeededRecord(gw.requests.at(-1)!, { objects: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }] }),
    ];
    const waited = await cli('get', 'pods', '--account', 'a', '-o', 'name');
    assert.equal(waited.code, 0, waited.err);
    assert.equal(waited.out, 'pod/p\n');
    assert.deepEqual(gw.waits, ['op-42']);
  });

  test('usage errors exit 2: missing --account, bad --timeout, bad --id, bad --gateway, unknown flag', async () => {
    for (const args of [
      ['get', 'pods'],
      ['get', 'pods', '--account', 'a', '--timeout', '0'],
      ['get', 'pods', '--account', 'a', '--timeout', 'soon'],
      ['get', 'pods', '--account', 'a', '--id', 'has space'],
      ['get', 'pods', '--account', 'a', '--bogus'],
      ['get', 'pods', '--account', 'a', '-o', 'table'],
      ['scale', 'deploy/web', '--account', 'a'],
      ['scale', 'deploy/web', '--replicas', '-1', '--account', 'a'],
      ['get', 'widgets', '--account', 'a'],
      ['delete', 'deploy/web/extra', '--account', 'a'],
      ['scale', 'deploy//web', '--replicas', '1', '--account', 'a'],
      ['rollout', 'restart', '9lives/web', '--account', 'a'],
    ]) {
      const r = await cli(...args);
      assert.equal(r.code, 2, `${args.join(' ')} → ${r.code}: ${r.err}`);
      assert.match(r.err, /error: /);
    }
    const badUrl = await runCli(['get', 'pods', '--account', 'a', '--gateway', 'ftp://x']);
    assert.equal(badUrl.code, 2);
    assert.match(badUrl.err, /invalid --gateway URL/);
    assert.equal(gw.requests.length, 0);
  });

  test('OUTPOST_ACCOUNT and OUTPOST_GATEWAY stand in for the flags', async () => {
    const r = await runCli(['get', 'pods'], { env: { OUTPOST_ACCOUNT: 'from-env', OUTPOST_GATEWAY: gw.url } });
    assert.equal(r.code, 0, r.err);
    assert.equal(gw.requests[0]!.account, 'from-env');
  });
});

test('an unreachable gateway exits 3 naming the URL', async () => {
  const gw = await startFakeGateway();
  const url = gw.url;
  await gw.close();
  const r = await runCli(['get', 'pods', '--account', 'a', '--gateway', url]);
  assert.equal(r.code, 3);
  assert.match(r.err, new RegExp(`^error: cannot reach the gateway at ${url.replace(/[.]/g, '\\.')} \\(ECONNREFUSED`));
  // Several objects: the first unreachable answer ends the command (one error line, not one per object).
  const many = await runCli(['delete', 'cm', 'a', 'b', 'c', '--account', 'a', '--gateway', url]);
  assert.equal(many.code, 3);
  assert.equal(many.err.split('\n').filter(Boolean).length, 1, many.err);
  for (const args of [['accounts'], ['operations'], ['get', 'pods', '--cached', '--account', 'a']]) {
    const read = await runCli([...args, '--gateway', url]);
    assert.equal(read.code, 3, `${args.join(' ')}: ${read.err}`);
    assert.match(read.err, /^error: cannot reach the gateway at /);
  }
});

test('a server that is not a gateway exits 3 saying so', async () => {
  const { createServer } = await import('node:http');
  const server = createServer((_req, res) => res.writeHead(404).end('nothing here'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  try {
    const r = await runCli(['get', 'pods', '--account', 'a', '--gateway', url]);
    assert.equal(r.code, 3, r.err);
    assert.match(r.err, /did not answer as an Outpost gateway does: it answered HTTP 404 with no content-type/);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
