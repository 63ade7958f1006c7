/**
 * `outpost rollout status`, `outpost patch` and `outpost delete` (several names, -f) on the real stack: the CLI in
 * process → gateway → agent → sandbox cluster, whose controllers roll Deployments, StatefulSets and DaemonSets out
 * (pods Ready late or never, on request). Exit codes: 0 done, 1 failed/timed out/not found, 2 bad input with nothing
 * sent (proved by the operation count).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createOperationClient } from '../../src/client/operation-client.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { runCli } from './operations-helpers.js';

function deploymentYaml(name: string, image: string, replicas: number, extra = ''): string {
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    `metadata: {name: ${name}, namespace: demo}`,
    'spec:',
    `  replicas: ${replicas}`,
    extra ? `  ${extra}` : '',
    `  selector: {matchLabels: {app: ${name}}}`,
    '  template:',
    `    metadata: {labels: {app: ${name}}}`,
    `    spec: {containers: [{name: main, image: "${image}"}]}`,
    '',
  ]
    .filter((l, i, all) => l !== '' || i === all.length - 1)
    .join('\n');
}

const configMaps = (...names: string[]) =>
  names.map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}, namespace: demo}\ndata: {k: v}\n`).join('---\n');

describe('rollout status, patch and delete on the real stack', () => {
  let stack: Stack;
  const cli = (...args: string[]) => runCli([...args, '--gateway', stack.gateway.httpUrl, '--account', 'sandbox']);
  const operationCount = async () => {
    const client = createOperationClient({ gatewayUrl: stack.gateway.httpUrl });
    let total = 0;
    let pageToken = '';
    do {
      const page = await client.raw.listOperations({ pageSize: 1000, pageToken });
      total += page.operations.length;
      pageToken = page.nextPageToken;
    } while (pageToken);
    return total;
  };
  const apply = async (name: string, text: string) => {
    const file = join(stack.dir, `${name}.yaml`);
    writeFileSync(file, text);
    const r = await cli('apply', '-f', file);
    assert.equal(r.code, 0, r.err);
    return file;
  };

  before(async () => {
    stack = await startStack({ agents: [{}] });
  });
  after(async () => {
    await stack?.close();
  });

  test('rollout status waits for a Deployment with kubectl lines, exit 0; StatefulSet and DaemonSet too', async () => {
    await apply('slow', deploymentYaml('slow', 'sandbox/ready-after:4000', 2));
    const r = await cli('rollout', 'status', 'deploy/slow', '-n', 'demo', '--timeout', '60s');
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trim().split('\n');
    assert.equal(lines.at(-1), 'deployment "slow" successfully rolled out');
    assert.ok(
      lines
        .slice(0, -1)
        .some((l) =>
          /^Waiting for deployment "slow" rollout to finish: (\d+ of 2 updated replicas are available|\d+ out of 2 new replicas have been updated)\.\.\.$/.test(
            l,
          ),
        ),
      r.out,
    );
    assert.equal(new Set(lines).size, lines.length, 'a line is printed only when it changes');

    await apply(
      'sets',
      [
        'apiVersion: apps/v1',
        'kind: StatefulSet',
        'metadata: {name: db, namespace: demo}',
        'spec: {replicas: 1, serviceName: db, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: main, image: db}]}}}',
        '---',
        'apiVersion: apps/v1',
        'kind: DaemonSet',
        'metadata: {name: agent, namespace: demo}',
        'spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: main, image: agent}]}}}',
        '',
      ].join('\n'),
    );
    const sts = await cli('rollout', 'status', 'statefulset', 'db', '-n', 'demo', '--timeout', '60s');
    assert.equal(sts.code, 0, sts.err);
    assert.match(sts.out, /^statefulset rolling update complete 1 pods at revision db-\w+\.\.\.$/m);
    const ds = await cli('rollout', 'status', 'ds/agent', '-n', 'demo', '--timeout', '60s');
    assert.equal(ds.code, 0, ds.err);
    assert.match(ds.out, /^daemon set "agent" successfully rolled out$/m);
  });

  test('rollout status: --watch=false reports once (exit 0), --timeout and ProgressDeadlineExceeded exit 1', async () => {
    await apply('stuck', deploymentYaml('stuck', 'sandbox/never-ready', 1));
    await apply('doomed', deploymentYaml('doomed', 'sandbox/never-ready', 1, 'progressDeadlineSeconds: 1'));

    const once = await cli('rollout', 'status', 'deployment/stuck', '-n', 'demo', '--watch=false');
    assert.equal(once.code, 0, once.err);
    assert.match(once.out, /^Waiting for deployment (spec update to be observed|"stuck" rollout to finish: .*)\.\.\.\n$/);

    const timedOut = await cli('rollout', 'status', 'deployment/stuck', '-n', 'demo', '--timeout', '3s');
    assert.equal(timedOut.code, 1, timedOut.out);
    assert.equal(timedOut.err, 'error: timed out waiting for the condition\n');
    assert.match(timedOut.out, /^Waiting for deployment "stuck" rollout to finish: 0 of 1 updated replicas are available\.\.\.$/m);

    const doomed = await cli('rollout', 'status', 'deployment/doomed', '-n', 'demo', '--timeout', '60s');
    assert.equal(doomed.code, 1, doomed.out);
    assert.equal(doomed.err, 'error: deployment "doomed" exceeded its progress deadline\n');
  });

  test('rollout status errors: a missing object exits 1; other kinds, --id and a bad --watch exit 2 sending nothing', async () => {
    const missing = await cli('rollout', 'status', 'deploy/nope', '-n', 'demo', '--timeout', '30s');
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^error: NotFound: .*nope.* \(HTTP 404\)\n$/);
    const before = await operationCount();
    for (const args of [
      ['rollout', 'status', 'cm/web-config', '-n', 'demo'],
      ['rollout', 'status', 'deploy/slow', '--watch=maybe'],
      ['rollout', 'status', 'deploy/slow', '--id', 'x1'],
      ['rollout', 'pause', 'deploy/slow', '--watch=false'],
    ]) {
      const r = await cli(...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, /error: /);
    }
    assert.equal(await operationCount(), before);
  });

  test('patch: strategic, merge and json patches change the live object; -p and --patch-file', async () => {
    await apply('patched', configMaps('patched'));
    const strategic = await cli('patch', 'cm', 'patched', '-n', 'demo', '-p', '{"metadata":{"labels":{"tier":"web"}}}');
    assert.equal(strategic.code, 0, strategic.err);
    assert.equal(strategic.out, 'configmap/patched patched\n');
    const merge = await cli('patch', 'configmap/patched', '-n', 'demo', '--type', 'merge', '-p', 'data: {added: "yes"}');
    assert.equal(merge.code, 0, merge.err);
    const file = join(stack.dir, 'patch.json');
    writeFileSync(file, '[{"op":"replace","path":"/data/k","value":"changed"},{"op":"remove","path":"/data/added"}]');
    const json = await cli('patch', 'cm/patched', '-n', 'demo', '--type', 'json', '--patch-file', file);
    assert.equal(json.code, 0, json.err);
    const got = await cli('get', 'cm/patched', '-n', 'demo', '-o', 'json');
    const object = JSON.parse(got.out);
    assert.deepEqual(object.data, { k: 'changed' });
    assert.equal(object.metadata.labels.tier, 'web');

    const missing = await cli('patch', 'cm/nope', '-n', 'demo', '-p', '{"data":{"a":"b"}}');
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^error: NotFound: .*\(HTTP 404\)\n$/);
  });

  test('patch: a patch that does not parse or has the wrong shape exits 2 and sends nothing', async () => {
    const before = await operationCount();
    const cases: [string[], RegExp][] = [
      [['-p', '{"data": '], /unable to parse/],
      [['--type', 'json', '-p', '{"op":"replace"}'], /a json patch must be a JSON array/],
      [['--type', 'json', '-p', '[{"op":"frobnicate","path":"/x"}]'], /operation 0: "op" must be one of/],
      [['--type', 'json', '-p', '[{"op":"add","path":"/data/x"}]'], /operation 0: "add" needs a "value"/],
      [['--type', 'json', '-p', '[{"op":"remove","path":"data"}]'], /"path" must be a JSON pointer/],
      [['--type', 'merge', '-p', '[1]'], /a merge patch must be a JSON object/],
      [['--type', 'xml', '-p', '{}'], /argument 'xml' is invalid/],
      [[], /exactly one of -p\/--patch or --patch-file/],
      [['--patch-file', join(stack.dir, 'nope.json')], /cannot read .*nope\.json: no such file or directory/],
    ];
    for (const [extra, message] of cases) {
      const r = await cli('patch', 'cm/patched', '-n', 'demo', ...extra);
      assert.equal(r.code, 2, `${extra.join(' ')}: ${r.err}`);
      assert.match(r.err, message);
    }
    assert.equal((await cli('patch', 'cm', '-p', '{}')).code, 2, 'a name is required');
    assert.equal(await operationCount(), before);
  });

  test('delete of several names and of -f FILE deletes each object; a missing one exits 1 after the others', async () => {
    await apply('three', configMaps('del-a', 'del-b', 'del-c', 'del-d'));
    const many = await cli('delete', 'cm', 'del-a', 'del-b', '-n', 'demo');
    assert.equal(many.code, 0, many.err);
    assert.equal(many.out, 'configmap "del-a" deleted from demo namespace\nconfigmap "del-b" deleted from demo namespace\n');
    const slashes = await cli('delete', 'cm/del-c', 'configmap/nope', 'cm/del-d', '-n', 'demo');
    assert.equal(slashes.code, 1);
    assert.equal(slashes.out, 'configmap "del-c" deleted from demo namespace\nconfigmap "del-d" deleted from demo namespace\n');
    assert.match(slashes.err, /^error: NotFound: .*nope.*\n$/);

    const file = await apply('from-file', `${configMaps('file-a')}---\n${deploymentYaml('file-web', 'nginx', 1)}`);
    const fromFile = await cli('delete', '-f', file);
    assert.equal(fromFile.code, 0, fromFile.err);
    assert.equal(fromFile.out, 'configmap "file-a" deleted from demo namespace\ndeployment.apps "file-web" deleted from demo namespace\n');
    const gone = await cli('get', 'cm', '-n', 'demo', '-o', 'name');
    assert.doesNotMatch(gone.out, /del-|file-a/);
  });

  test('delete -f with malformed YAML, a nameless object, or with names too exits 2 and sends nothing', async () => {
    const bad = join(stack.dir, 'bad.yaml');
    writeFileSync(bad, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   namespace: demo\n');
    const nameless = join(stack.dir, 'nameless.yaml');
    writeFileSync(nameless, `${configMaps('keep-me')}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: demo}\n`);
    const before = await operationCount();
    const malformed = await cli('delete', '-f', bad);
    assert.equal(malformed.code, 2);
    assert.match(malformed.err, /^error: .*bad\.yaml: line 4, column 9: Nested mappings/);
    const noName = await cli('delete', '-f', nameless);
    assert.equal(noName.code, 2);
    assert.match(noName.err, /nameless\.yaml: document 2: ConfigMap has no metadata\.name/);
    for (const args of [
      ['delete', 'cm', '-f', bad],
      ['delete', '-f', nameless, '-l', 'a=b'],
      ['delete'],
      ['delete', 'cm', 'a', 'b', '--id', 'one-id'],
      ['delete', 'cm/a', 'b'],
    ]) {
      const r = await cli(...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    }
    assert.equal(await operationCount(), before);
  });
});
