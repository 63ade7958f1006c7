/**
 * kubectl through the gateway, end to end with real kubectl binaries (1.27 and 1.33) against the sandbox: a TLS
 * gateway with token identities, an agent serving the sandbox over its TLS stream, and kubeconfigs pointing at
 * `/k8s/sandbox`. Shows get, apply, delete, `get -w` receiving a change, `logs -f` streaming and its cancel reaching
 * the cluster, `auth can-i --list` showing the impersonated user's rules, a 403 of the cluster's RBAC passed through,
 * exec and port-forward over WebSocket (kubectl 1.33) and the clear refusal of SPDY (kubectl 1.27).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../../testkit/eventually.js';
import type { Kubectl } from '../../testkit/kubectl-runner.js';
import { auditEvents, echoThrough, gatewayKubectl, KUBECTLS, startKubeStack, TOKENS, webPod, type KubeStack } from './kubectl-helpers.js';

describe('kubectl through the gateway', { concurrency: false }, () => {
  let k: KubeStack;
  let pod: string;

  before(async () => {
    k = await startKubeStack({ waitForCache: true });
    pod = await webPod(k.admin);
  });
  after(async () => {
    await k?.close();
  });

  for (const version of KUBECTLS) {
    describe(version.label, { concurrency: false }, () => {
      let kubectl: Kubectl;
      const suffix = version.label.replace(/\D/g, '');
      before(async () => {
        kubectl = await gatewayKubectl(version.bin, k.stack.gateway.httpUrl, k.pki.caFile, TOKENS.alice);
      });
      after(() => kubectl?.cleanup());

      test('get, apply and delete', async () => {
        const pods = await kubectl.ok(['get', 'pods', '-n', 'demo']);
        assert.match(pods, new RegExp(pod));
        const manifest = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-${suffix}, namespace: demo}\ndata: {color: blue}\n`;
        assert.match(
          await kubectl.ok(['apply', ...version.applyFlags, '-f', '-'], { input: manifest }),
          new RegExp(`configmap/cm-${suffix} created`),
        );
        assert.equal(await k.admin.ok(['get', 'configmap', '-n', 'demo', `cm-${suffix}`, '-o', 'jsonpath={.data.color}']), 'blue');
        assert.match(await kubectl.ok(['delete', 'configmap', '-n', 'demo', `cm-${suffix}`]), /deleted/);
        const gone = await k.admin.run(['get', 'configmap', '-n', 'demo', `cm-${suffix}`]);
        assert.notEqual(gone.code, 0);
        assert.match(gone.stderr, /NotFound|not found/);
      });

      test('get -w receives a change made meanwhile, and stopping it ends the watch in the cluster', async () => {
        const before = k.stack.sandbox.openWatches();
        const watch = kubectl.watch(['get', 'configmaps', '-n', 'demo']);
        try {
          await eventually('the watch is open in the sandbox', () => k.stack.sandbox.openWatches() > before || undefined);
          const manifest = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: watched-${suffix}, namespace: demo}\ndata: {a: b}\n`;
          await k.admin.ok(['apply', '-f', '-'], { input: manifest });
          await watch.waitFor((events) => events.some((e) => e.type === 'ADDED' && e.object.metadata.name === `watched-${suffix}`));
        } finally {
          watch.stop();
        }
        await eventually('the watch ended in the sandbox', () => k.stack.sandbox.openWatches() <= before || undefined);
      });

      test('logs -f streams lines as the container writes them', async () => {
        const logs = kubectl.stream(['logs', '-f', '-n', 'demo', pod]);
        try {
          await logs.waitFor(/sandbox: starting container/);
          await logs.waitFor(/heartbeat 2/);
        } finally {
          logs.stop();
        }
      });

      test('auth can-i --list shows the rights of the impersonated user, not the agent', async () => {
        const out = await kubectl.ok(['auth', 'can-i', '--list', '-n', 'demo']);
        assert.match(out, /configmaps\s+\[\]\s+\[\]\s+\[\*\]/);
        assert.match(out, /pods\/exec/);
        assert.doesNotMatch(out, /^\*\.\*/m, 'the agent is in system:masters; the caller is not');
        assert.equal((await kubectl.run(['auth', 'can-i', 'delete', 'deployments', '-n', 'demo'])).stdout.trim(), 'no');
      });

      test('a request the impersonated user may not make is refused by the cluster, its 403 passed through', async () => {
        const denied = await kubectl.run(['get', 'secrets', '-n', 'demo']);
        assert.notEqual(denied.code, 0);
        assert.match(denied.stderr, /Forbidden/);
        assert.match(denied.stderr, /User "outpost:alice" cannot list resource "secrets"/);
      });

      if (version.websocket) {
        test('exec runs the built-in over WebSocket, stdin included, and its exit code comes back', async () => {
          assert.equal((await kubectl.ok(['exec', '-n', 'demo', pod, '--', 'echo', 'hello', 'outpost'])).trim(), 'hello outpost');
          assert.equal(await kubectl.ok(['exec', '-i', '-n', 'demo', pod, '--', 'cat'], { input: 'piped through\n' }), 'piped through\n');
          const failing = await kubectl.run(['exec', '-n', 'demo', pod, '--', 'sh', '-c', 'exit 3']);
          assert.equal(failing.code, 3, failing.stderr);
        });

        test('attach reaches the container over WebSocket', async () => {
          const attached = await kubectl.run(['attach', '-i', '-n', 'demo', pod], { input: 'hello attach\n' });
          assert.equal(attached.code, 0, attached.stderr);
          assert.match(attached.stdout, /hello attach/);
        });

        test('port-forward reaches the pod through the tunnel', async () => {
          const forward = kubectl.stream(['port-forward', '-n', 'demo', `pod/${pod}`, ':7777']);
          try {
            const [, port] = await forward.waitFor(/Forwarding from 127\.0\.0\.1:(\d+) -> 7777/);
            const echoed = await echoThrough(Number(port), 'ping through the gateway\n');
            assert.equal(echoed, 'ping through the gateway\n');
          } finally {
            forward.stop();
          }
        });
      } else {
        test('exec over SPDY is refused with a clear message', async () => {
          const refused = await kubectl.run(['exec', '-n', 'demo', pod, '--', 'echo', 'hello']);
          assert.notEqual(refused.code, 0);
          assert.match(refused.stderr, /over WebSocket only/);
          assert.match(refused.stderr, /kubectl 1\.30 or later/);
        });
      }
    });
  }

  test('every request above is in the audit log, with the impersonated identity and never a body', async () => {
    // The entry of an upgrade (exec, port-forward) is written when its socket has closed, which may come after the
    // later requests' entries: wait for those too, not only for the last request's.
    const upgradesDone = (all: { subresource?: string; status?: number }[]) =>
      !KUBECTLS.some((v) => v.websocket) ||
      ['exec', 'portforward'].every((sub) => all.some((e) => e.subresource === sub && e.status === 101));
    const events = await eventually('the audit rows are written', async () => {
      const all = await auditEvents(k.stack.gateway.httpUrl, k.pki.caPem, 'token:alice');
      return all.some((e) => e.resource === 'secrets') && upgradesDone(all) ? all : undefined;
    });
    const find = (what: Partial<(typeof events)[number]>) =>
      events.find((e) => Object.entries(what).every(([key, value]) => e[key as keyof typeof e] === value));
    for (const e of events) assert.equal(e.account, 'sandbox');
    const listed = find({ verb: 'list', resource: 'pods', namespace: 'demo', status: 200 });
    assert.ok(listed, 'kubectl get pods');
    assert.equal(listed.impersonatedUser, 'outpost:alice');
    assert.deepEqual(listed.impersonatedGroups, ['outpost:devs']);
    assert.ok(Number(listed.bytesOut) > 0);
    assert.ok(find({ verb: 'delete', resource: 'configmaps', status: 200 }), 'kubectl delete');
    assert.ok(find({ verb: 'watch', resource: 'configmaps', status: 200 }), 'kubectl get -w');
    assert.ok(find({ verb: 'get', resource: 'pods', subresource: 'log', status: 200 }), 'kubectl logs -f');
    assert.ok(find({ verb: 'list', resource: 'secrets', status: 403 }), 'the 403 of the cluster');
    assert.ok(find({ resource: 'selfsubjectrulesreviews', status: 201 }), 'kubectl auth can-i --list');
    if (KUBECTLS.some((v) => v.websocket)) {
      assert.ok(find({ subresource: 'exec', status: 101 }), 'kubectl exec');
      assert.ok(find({ subresource: 'portforward', status: 101 }), 'kubectl port-forward');
    }
    if (KUBECTLS.some((v) => !v.websocket)) assert.ok(find({ subresource: 'exec', status: 400 }), 'the SPDY refusal');
    assert.ok(!JSON.stringify(events).includes('czNjcjN0'), 'no Secret value in the audit log');
  });
});
