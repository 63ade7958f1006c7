import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resourceList } from '../../src/sandbox/discovery.js';
import { createKindRegistry } from '../../src/sandbox/kinds.js';
import { startSandbox } from '../../src/sandbox/sandbox.js';

describe('policy/v1 PodDisruptionBudget', () => {
  test('is a built-in namespaced kind with a status subresource and the short name pdb', () => {
    const info = createKindRegistry().byKind('policy/v1', 'PodDisruptionBudget');
    assert.ok(info, 'served');
    assert.equal(info.plural, 'poddisruptionbudgets');
    assert.equal(info.namespaced, true);
    assert.deepEqual(info.shortNames, ['pdb']);
    assert.deepEqual(info.subresources, ['status']);
    assert.equal(info.custom, undefined);
  });

  test('discovery lists it and its status subresource under policy/v1', () => {
    const list = resourceList(createKindRegistry(), 'policy', 'v1') as {
      resources: { name: string; namespaced: boolean; shortNames?: string[] }[];
    };
    const names = list.resources.map((r) => r.name);
    assert.deepEqual(names, ['poddisruptionbudgets', 'poddisruptionbudgets/status']);
    assert.deepEqual(list.resources[0]!.shortNames, ['pdb']);
  });

  test('is created over HTTP, keeps its spec on a status update and gets a generation', async () => {
    const sandbox = await startSandbox();
    try {
      const headers = { authorization: `Bearer ${sandbox.adminToken}`, 'content-type': 'application/json' };
      sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pdb' } });
      const base = `${sandbox.url}/apis/policy/v1/namespaces/pdb/poddisruptionbudgets`;
      const created = await fetch(base, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata: { name: 'web' },
          spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
        }),
      });
      assert.equal(created.status, 201);
      const body = (await created.json()) as { metadata: { generation: number; resourceVersion: string } };
      assert.equal(body.metadata.generation, 1);

      const status = await fetch(`${base}/web/status`, {
        method: 'PATCH',
        headers: { ...headers, 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({
          spec: { maxUnavailable: 3 },
          status: { currentHealthy: 2, desiredHealthy: 2, disruptionsAllowed: 1, expectedPods: 3 },
        }),
      });
      assert.equal(status.status, 200);
      const stored = sandbox.store.get('policy/v1', 'PodDisruptionBudget', 'pdb', 'web') as unknown as {
        spec: { maxUnavailable: number };
        status: { disruptionsAllowed: number };
      };
      assert.equal(stored.spec.maxUnavailable, 1, 'the status subresource leaves spec alone');
      assert.equal(stored.status.disruptionsAllowed, 1);
    } finally {
      await sandbox.close();
    }
  });
});
