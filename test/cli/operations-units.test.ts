/**
 * The pieces under the operation commands: kubectl kind names, durations, kubectl-style tables, error → exit code.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { formatDuration, fromProtoDuration, parseDuration, toProtoDuration } from '../../src/client/duration.js';
import { CliError, describeClientError, ExitCode } from '../../src/client/errors.js';
import { displayType, resolveKind, splitTarget, UnknownKindError } from '../../src/shared/kind-names.js';
import { renderTable } from '../../src/client/table.js';
import { runCli } from './operations-helpers.js';

test('kubectl kind names map to the Kind with an empty apiVersion; CamelCase passes through; unknown lower case throws', () => {
  for (const name of ['deployment', 'deploy', 'deployments', 'Deployment', 'deployment.apps', 'deployments.v1.apps']) {
    assert.deepEqual(resolveKind(name), { kind: 'Deployment', apiVersion: '', clusterScoped: false }, name);
  }
  assert.equal(resolveKind('svc').kind, 'Service');
  assert.equal(resolveKind('cm').kind, 'ConfigMap');
  assert.equal(resolveKind('po').kind, 'Pod');
  assert.equal(resolveKind('ns').clusterScoped, true);
  assert.equal(resolveKind('crd').kind, 'CustomResourceDefinition');
  assert.deepEqual(resolveKind('Widget.example.com'), { kind: 'Widget', apiVersion: '', clusterScoped: false });
  assert.throws(() => resolveKind('widgets'), UnknownKindError);
  assert.throws(() => resolveKind('bad/kind'), UnknownKindError);
  assert.throws(() => resolveKind(''), UnknownKindError);
});

test('KIND/NAME and KIND NAME targets split; malformed ones throw', () => {
  assert.deepEqual(splitTarget('deploy/web'), { kindText: 'deploy', name: 'web' });
  assert.deepEqual(splitTarget('deploy', 'web'), { kindText: 'deploy', name: 'web' });
  assert.deepEqual(splitTarget('pods'), { kindText: 'pods', name: '' });
  assert.throws(() => splitTarget('a/b/c'), RangeError);
  assert.throws(() => splitTarget('deploy/'), RangeError);
  assert.throws(() => splitTarget('deploy/web', 'again'), RangeError);
  assert.equal(displayType('apps/v1', 'Deployment'), 'deployment.apps');
  assert.equal(displayType('', 'Deployment'), 'deployment.apps');
  assert.equal(displayType('v1', 'ConfigMap'), 'configmap');
  assert.equal(displayType('', 'Widget'), 'widget');
});

test('durations parse like kubectl and convert to and from protobuf', () => {
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('2m'), 120_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('1.5s'), 1500);
  assert.equal(parseDuration('45'), 45_000);
  assert.equal(parseDuration('0s'), 0);
  for (const bad of ['', 'soon', '5 s', '-1s', '1d', 's']) assert.throws(() => parseDuration(bad), RangeError, bad);
  const d = toProtoDuration(1500.4);
  assert.equal(d.seconds, 1n);
  assert.ok(Number.isInteger(d.nanos));
  assert.equal(Math.round(fromProtoDuration(d)), 1500);
  assert.equal(fromProtoDuration(undefined), 0);
  assert.equal(formatDuration(90_000), '90s');
  assert.equal(formatDuration(5 * 60_000 + 3000), '5m3s');
  assert.equal(formatDuration(3 * 86_400_000), '3d');
});

test('tables have kubectl columns per kind, NAMESPACE first across namespaces, and <none> for missing values', () => {
  const now = Date.parse('2026-01-01T00:10:00Z');
  const pod = {
    metadata: { name: 'web-1', namespace: 'demo', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { containers: [{ name: 'a' }, { name: 'b' }] },
    status: {
      phase: 'Running',
      containerStatuses: [
        { ready: true, restartCount: 2 },
        { ready: false, restartCount: 1 },
      ],
    },
  };
  assert.equal(
    renderTable([pod], { kind: 'Pod', withNamespace: true, now }),
    'NAMESPACE   NAME    READY   STATUS    RESTARTS   AGE\ndemo        web-1   1/2     Running   3          10m\n',
  );
  assert.match(renderTable([pod], { kind: 'Pod', wide: true, now }), /IP\s+NODE\s+AGE\n.*<none>\s+<none>\s+10m/);
  assert.equal(renderTable([{ metadata: { name: 'w' } }], { kind: 'Widget', now }), 'NAME   AGE\nw      <unknown>\n');
});

test('errors map to exit codes: CliError keeps its code, unreachable is 3, bad input 2, the rest 1', () => {
  assert.deepEqual(describeClientError(new CliError('x', ExitCode.USAGE), 'http://g'), { exitCode: 2, message: 'x' });
  const refused = new ConnectError(
    'connect ECONNREFUSED',
    Code.Unavailable,
    undefined,
    undefined,
    Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }),
  );
  assert.equal(describeClientError(refused, 'http://g').exitCode, ExitCode.UNREACHABLE);
  assert.match(describeClientError(refused, 'http://g').message, /cannot reach the gateway at http:\/\/g/);
  assert.equal(describeClientError(new ConnectError('bad', Code.InvalidArgument), 'http://g').exitCode, ExitCode.USAGE);
  assert.equal(describeClientError(new ConnectError('late', Code.DeadlineExceeded), 'http://g').exitCode, ExitCode.FAILED);
  assert.equal(describeClientError(new Error('boom'), 'http://g').exitCode, ExitCode.FAILED);
});

test('--help works for every operation command and lists the shared flags', async () => {
  for (const command of ['apply', 'delete', 'scale', 'rollout', 'get', 'logs']) {
    const r = await runCli([command, '--help']);
    assert.equal(r.code, 0, `${command}: ${r.err}`);
    for (const flag of ['--account', '--gateway', '--timeout', '--id', '--no-wait', '--namespace']) {
      assert.ok(r.out.includes(flag), `${command} --help misses ${flag}`);
    }
  }
});

test('malformed YAML is caught before anything is sent: file, line and column, exit 2', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'outpost-yaml-'));
  try {
    const good = join(dir, 'a-good.yaml');
    const bad = join(dir, 'b-bad.yaml');
    writeFileSync(good, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n');
    writeFileSync(bad, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   bad: [\n');
    // The gateway address is unreachable: had anything been sent, the exit code would be 3.
    const common = ['--account', 'sandbox', '--gateway', 'http://127.0.0.1:1'];
    const fromFile = await runCli(['apply', '-f', bad, ...common]);
    assert.equal(fromFile.code, 2, fromFile.err);
    assert.match(fromFile.err, new RegExp(`${bad.replace(/[.]/g, '\\.')}: line \\d+, column \\d+: `));
    const fromDir = await runCli(['apply', '-f', dir, ...common]);
    assert.equal(fromDir.code, 2);
    assert.match(fromDir.err, /b-bad\.yaml: line \d+, column \d+/);
    const fromStdin = await runCli(['apply', '-f', '-', ...common], { stdin: '{"kind": [1,\n' });
    assert.equal(fromStdin.code, 2);
    assert.match(fromStdin.err, /stdin: line \d+, column \d+/);
    const valid = await runCli(['apply', '-f', good, ...common]);
    assert.equal(valid.code, 3, 'valid YAML is sent (and the unreachable gateway answers exit 3)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("-o yaml and -o json print kubectl's bytes: keys sorted, a List around several objects, no managedFields", async () => {
  const { formatObjects } = await import('../../src/client/format.js');
  const object = {
    status: { replicas: 1 },
    spec: { replicas: 1 },
    metadata: { uid: 'u-1', name: 'web', creationTimestamp: '2024-01-01T00:00:00Z', managedFields: [{ manager: 'x' }] },
    kind: 'Deployment',
    apiVersion: 'apps/v1',
  };
  const yaml = formatObjects([object], { output: 'yaml', kind: 'Deployment', single: true, namespace: 'demo' }).stdout;
  assert.equal(
    yaml,
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  creationTimestamp: "2024-01-01T00:00:00Z"\n  name: web\n  uid: u-1\nspec:\n  replicas: 1\nstatus:\n  replicas: 1\n',
  );
  const list = formatObjects([object, object], { output: 'json', kind: 'Deployment', single: false, namespace: 'demo' }).stdout;
  assert.deepEqual(Object.keys(JSON.parse(list)), ['apiVersion', 'items', 'kind', 'metadata']);
  assert.match(list, /^\{\n {4}"apiVersion": "v1",\n {4}"items": \[\n {8}\{\n {12}"apiVersion": "apps\/v1",\n {12}"kind"/);
  assert.doesNotMatch(list, /managedFields/);
  assert.match(list, /\n {4}"metadata": \{\n {8}"resourceVersion": ""\n {4}\}\n\}\n$/);
});
