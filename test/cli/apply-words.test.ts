/**
 * `outpost apply` prints, per object, the word the agent reported for it (OperationResult.actions), in kubectl's
 * exact line format `kind/name verb`: on the real stack (CLI in process → gateway → agent → TLS sandbox), next to the
 * real kubectl applying the same file to the same cluster in a namespace of its own. A file with one existing and one
 * new ConfigMap prints `configured` then `created`; the same file again prints `unchanged` for each.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startStack, type Stack } from '../../testkit/stack.js';
import { createKubectl, type Kubectl } from '../../testkit/kubectl-runner.js';
import { KUBECTLS } from '../e2e/kubectl-helpers.js';
import { runCli } from './operations-helpers.js';

const configMap = (name: string, namespace: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata:\n  key: "${value}"\n`;

describe('apply prints what the agent did to each object, as kubectl does', () => {
  let stack: Stack;
  const kubectls: { label: string; kubectl: Kubectl; flags: string[] }[] = [];
  const cli = (...args: string[]) => runCli([...args, '--gateway', stack.gateway.httpUrl, '--account', 'sandbox']);
  const file = (name: string, text: string) => {
    const path = join(stack.dir, `${name}.yaml`);
    writeFileSync(path, text);
    return path;
  };

  before(async () => {
    // kubectl sends its bearer token over TLS only.
    stack = await startStack({ agents: [{}], sandbox: { tls: true } });
    for (const k of KUBECTLS) kubectls.push({ label: k.label, kubectl: await createKubectl(k.bin, stack.sandbox), flags: k.applyFlags });
  });
  after(async () => {
    for (const k of kubectls) k.kubectl.cleanup();
    await stack?.close();
  });

  /** Applies `a` alone, then `a` changed with a new `b`, then that file again; returns the last two outputs. */
  const scenario = async (apply: (path: string) => Promise<string>, namespace: string) => {
    stack.sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await apply(file(`${namespace}-first`, configMap('a', namespace, '1')));
    const both = file(`${namespace}-both`, `${configMap('a', namespace, '2')}---\n${configMap('b', namespace, '1')}`);
    return { mixed: await apply(both), again: await apply(both) };
  };

  test('one existing and one new object: configured, created; the same file again: unchanged, unchanged', async () => {
    const outpost = await scenario(async (path) => {
      const r = await cli('apply', '-f', path);
      assert.equal(r.code, 0, r.err);
      assert.equal(r.err, '');
      return r.out;
    }, 'words-outpost');
    assert.equal(outpost.mixed, 'configmap/a configured\nconfigmap/b created\n');
    assert.equal(outpost.again, 'configmap/a unchanged\nconfigmap/b unchanged\n');
    assert.equal(
      (stack.sandbox.store.get('v1', 'ConfigMap', 'words-outpost', 'a')?.data as { key?: string } | undefined)?.key,
      '2',
      'configured means changed',
    );

    for (const { label, kubectl, flags } of kubectls) {
      const namespace = `words-${label.replace(/[^a-z0-9]+/g, '-')}`;
      const real = await scenario((path) => kubectl.ok(['apply', ...flags, '-f', path]), namespace);
      assert.deepEqual(real, outpost, `${label} prints the same lines`);
    }
  });

  test('server-side apply and a Deployment print their own words and kubectl types', async () => {
    stack.sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'words-ssa' } });
    const path = file('ssa', configMap('s', 'words-ssa', '1'));
    const ssa = await cli('apply', '--server-side', '-f', path);
    assert.equal(ssa.code, 0, ssa.err);
    assert.equal(ssa.out, 'configmap/s serverside-applied\n');
    const newest = kubectls.at(-1);
    if (newest) {
      const real = await newest.kubectl.ok([
        'apply',
        '--server-side',
        ...newest.flags,
        '-f',
        file('ssa-real', configMap('s', 'default', '1')),
      ]);
      assert.equal(real, ssa.out, `${newest.label} prints the same line`);
    }

    const deployment = file(
      'deploy',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: words, namespace: words-ssa}\nspec:\n  selector: {matchLabels: {app: words}}\n  template:\n    metadata: {labels: {app: words}}\n    spec: {containers: [{name: main, image: nginx}]}\n',
    );
    assert.equal((await cli('apply', '-f', deployment)).out, 'deployment.apps/words created\n');
    assert.equal((await cli('apply', '-f', deployment)).out, 'deployment.apps/words unchanged\n');
  });
});
