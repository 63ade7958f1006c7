/**
 * A cluster whose server URL has a path prefix (a Rancher-style proxy: `http://host/k8s/clusters/c1`): a real
 * reverse proxy (testkit/prefix-proxy.ts) in front of the sandbox serves it there and records every request. Whatever
 * the gateway or an operation asks for — backslashes, encoded separators and dot segments, control characters, `..`
 * as a name or an apiVersion that climbs — the agent sends nothing outside the prefix: the Kubernetes API proxy and
 * the operations both build the URL as the server URL plus the checked path, by text (docs/kubectl.md, "Paths").
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { OperationSchema, type Operation } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import type { KubeClient } from '../../src/agent/kube/kube-client.js';
import { executeOperation } from '../../src/agent/operations/operation-executor.js';
import { createResourceResolver } from '../../src/agent/operations/resource-resolver.js';
import { startPrefixedCluster, type PrefixedCluster, type PrefixProxy } from '../../testkit/prefix-proxy.js';
import { answerOf, kubeHead, proxyAccount, proxyFor } from './kube-proxy-driver.js';

/** Paths the shared rules refuse: each one, re-resolved below the prefix, would have left it. */
const ESCAPES = [
  '/api\\..\\..\\..\\v3\\x',
  '/api/v1\\..\\..\\..\\..\\v3',
  '/api/%5c..%5c..%5c..%5cv3',
  '/api/%2f..%2f..%2f..%2fv3',
  '/api/%2e%2e/%2E%2E/.%2e/%2e./v3/x',
  '/api/v1/../../../../v3',
  '/api/\t../../../../v3',
  '/api/v1/namespaces/demo/configmaps/x%00',
  '/api/v1/namespaces/demo/configmaps/x%0d%0aimpersonate-user:%20sandbox-admin',
  '/api/v1/\u00e9/../../../../v3',
  '/api/v1#/../../../../v3',
  '/api/v1/%/../../../v3',
];

describe('a cluster below a path prefix', () => {
  let cluster: PrefixedCluster;
  let proxy: PrefixProxy;
  let client: KubeClient;

  before(async () => {
    cluster = await startPrefixedCluster();
    ({ proxy, client } = cluster);
  });
  after(() => cluster?.close());

  test('the Kubernetes API proxy: served below the prefix; escaping paths are refused and never sent', async () => {
    const { proxy: kubeProxy, out } = proxyFor([
      proxyAccount('c1', client, { identity: 'static', user: 'ops', groups: ['system:masters'] }),
    ]);
    const send = (id: bigint, path: string) => kubeProxy.received(kubeHead(id, { account: 'c1', path, noBody: true }));

    send(1n, '/api/v1/namespaces/demo/configmaps');
    assert.equal((await answerOf(out, 1n)).status, 200, 'a plain path is served below the prefix');
    assert.ok(proxy.requests().some((r) => r.target === '/k8s/clusters/c1/api/v1/namespaces/demo/configmaps'));

    // One by one, so each answer is matched to its path.
    let id = 100n;
    for (const path of ESCAPES) {
      send(++id, path);
      const answer = await answerOf(out, id);
      assert.equal(answer.status, 0, `${JSON.stringify(path)} reached the cluster`);
      assert.equal(answer.code, 'refused', JSON.stringify(path));
    }
    assert.deepEqual(
      proxy.outside().map((r) => r.target),
      [],
      'nothing was requested outside the prefix',
    );
  });

  test('operations: names, namespaces and apiVersions never lead outside the prefix', async () => {
    const run = (id: string, spec: Operation['spec']) =>
      executeOperation(create(OperationSchema, { id, account: 'c1', spec }), {
        client,
        resolver: createResourceResolver(),
        settings: { serverSideApplyKinds: [], defaultFieldManager: 'outpost', deletePollMs: 20 },
        retries: { maxAttempts: 1, backoffMs: 5 },
        signal: AbortSignal.timeout(30_000),
        timeoutMs: 30_000,
      });
    const listed = await run('list', { case: 'list', value: { kind: 'ConfigMap', namespace: 'demo' } as never });
    assert.equal(listed.success, true, listed.message);
    assert.ok(proxy.requests().some((r) => r.target.startsWith('/k8s/clusters/c1/api/v1/namespaces/demo/configmaps')));

    const climbing = ['v1/../../../../v3', 'apps\\..\\..\\..\\..\\v3', '%2e%2e/%2e%2e/%2e%2e/%2e%2e/v3', 'apps/v1?x=/../../../../v3'];
    const hostile: Array<[string, Operation['spec']]> = [
      ['get a name ".."', { case: 'get', value: { kind: 'ConfigMap', namespace: 'demo', name: '..' } as never }],
      ['get in namespace ".."', { case: 'get', value: { kind: 'ConfigMap', namespace: '..', name: '..' } as never }],
      ['list in namespace ".."', { case: 'list', value: { kind: 'ConfigMap', namespace: '..' } as never }],
      ['logs of pod ".." in ".."', { case: 'logs', value: { namespace: '..', pod: '..' } as never }],
      ['delete a name ".."', { case: 'delete', value: { kind: 'ConfigMap', namespace: 'demo', name: '..' } as never }],
      ['scale a name ".."', { case: 'scale', value: { kind: 'Deployment', namespace: 'demo', name: '..', replicas: 1 } as never }],
      [
        'apply a manifest named ".."',
        { case: 'apply', value: { manifests: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "..", namespace: demo}\n' } as never },
      ],
      ...climbing.flatMap(
        (apiVersion): Array<[string, Operation['spec']]> => [
          [`get with apiVersion ${apiVersion}`, { case: 'get', value: { apiVersion, kind: 'X', namespace: 'demo', name: 'x' } as never }],
          [
            `apply with apiVersion ${apiVersion}`,
            {
              case: 'apply',
              value: { manifests: `apiVersion: "${apiVersion.replaceAll('\\', '\\\\')}"\nkind: X\nmetadata: {name: x}\n` } as never,
            },
          ],
        ],
      ),
    ];
    let n = 0;
    for (const [what, spec] of hostile) {
      const result = await run(`hostile-${++n}`, spec);
      assert.equal(result.success, false, what);
      assert.ok(result.statusCode >= 400 && result.statusCode < 500, `${what}: ${result.statusCode} ${result.message}`);
    }
    assert.deepEqual(
      proxy.outside().map((r) => r.target),
      [],
      'nothing was requested outside the prefix',
    );
  });
});
