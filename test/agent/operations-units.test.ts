import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { create, toBinary } from '@bufbuild/protobuf';
import {
  OperationResultSchema,
  OperationSchema,
  type Operation,
  type OperationResult,
} from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { createKubeClient, type KubeClient, type KubeRequest } from '../../src/agent/kube/kube-client.js';
import { parseManifests } from '../../src/agent/operations/manifests.js';
import { durationFromMs, executeOperation, MAX_RESULT_BYTES } from '../../src/agent/operations/operation-executor.js';
import { OperationError } from '../../src/agent/operations/operation-error.js';
import { createOperationRunner } from '../../src/agent/operations/operation-runner.js';
import { patchSchemaFor } from '../../src/agent/operations/patch-meta.js';
import { createResourceResolver, resourcePath } from '../../src/agent/operations/resource-resolver.js';
import { createResultCache } from '../../src/agent/operations/result-cache.js';
import { threeWayPatch } from '../../src/agent/operations/three-way-patch.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';

const settings = { serverSideApplyKinds: [], defaultFieldManager: 'outpost', deletePollMs: 20 };

describe('three-way patch', () => {
  const deployment = patchSchemaFor('apps', 'Deployment');

  test('strategic: merge-keyed lists change per element, removed elements get $patch: delete, others keep theirs', () => {
    const original = {
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'a', image: '1' },
              { name: 'b', image: '1' },
            ],
          },
        },
      },
    };
    const modified = { spec: { template: { spec: { containers: [{ name: 'a', image: '2' }] } } } };
    const current = {
      spec: {
        replicas: 3,
        template: {
          spec: {
            containers: [
              { name: 'a', image: '1', imagePullPolicy: 'IfNotPresent' },
              { name: 'b', image: '1' },
              { name: 'injected', image: 'x' },
            ],
          },
        },
      },
    };
    assert.deepEqual(threeWayPatch(original, modified, current, deployment), {
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'a', image: '2' },
              { name: 'b', $patch: 'delete' },
            ],
            '$setElementOrder/containers': [{ name: 'a' }],
          },
        },
      },
    });
  });

  test('fields removed since the last apply are nulled; fields never applied are left alone; unchanged is empty', () => {
    const original = { data: { a: '1', b: '2' }, metadata: { labels: { x: '1' } } };
    const modified = { data: { a: '1' }, metadata: { labels: { x: '1' } } };
    const current = { data: { a: '1', b: '2', c: 'other' }, metadata: { labels: { x: '1', y: 'other' } } };
    assert.deepEqual(threeWayPatch(original, modified, current, patchSchemaFor('', 'ConfigMap')), { data: { b: null } });
    assert.deepEqual(threeWayPatch(modified, modified, current, patchSchemaFor('', 'ConfigMap')), {});
  });

  test('primitive set lists (finalizers) add and remove members', () => {
    const patch = threeWayPatch(
      { metadata: { finalizers: ['a', 'b'] } },
      { metadata: { finalizers: ['a', 'c'] } },
      { metadata: { finalizers: ['a', 'b', 'z'] } },
      patchSchemaFor('', 'ConfigMap'),
    );
    assert.deepEqual(patch, { metadata: { finalizers: ['c'], '$deleteFromPrimitiveList/finalizers': ['b'] } });
  });

  test('JSON merge patch (custom resources): lists replace as a whole', () => {
    const patch = threeWayPatch(
      { spec: { sizes: [1, 2], old: true } },
      { spec: { sizes: [3] } },
      { spec: { sizes: [1, 2], old: true, status: 'x' } },
      undefined,
    );
    assert.deepEqual(patch, { spec: { sizes: [3], old: null } });
  });
});

describe('manifest parsing', () => {
  test('multi-document YAML, JSON arrays and Lists flatten; empty documents are skipped', () => {
    const objects = parseManifests(`---
apiVersion: v1
kind: List
items:
  - { apiVersion: v1, kind: ConfigMap, metadata: { name: a } }
  - { apiVersion: v1, kind: ConfigMap, metadata: { name: b } }
---
---
apiVersion: v1
kind: Service
metadata: { name: c }
`);
    assert.deepEqual(
      objects.map((o) => [o.where, o.object.kind, (o.object.metadata as { name: string }).name]),
      [
        ['document 1, item 1', 'ConfigMap', 'a'],
        ['document 1, item 2', 'ConfigMap', 'b'],
        ['document 3', 'Service', 'c'],
      ],
    );
    assert.equal(parseManifests('[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}]').length, 1);
  });

  test('bad documents are InvalidManifest errors naming the document', () => {
    for (const [text, message] of [
      ['   ', /empty manifest/],
      ['[]', /empty manifest/],
      ['{"apiVersion":"v1","kind":"ConfigMap"}', /document 1: not a Kubernetes object: metadata is missing/],
      ['[1]', /document 1, item 1: expected a Kubernetes object/],
      [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: a }\n---\n- just\n- a list of strings',
        /document 2, item 1: expected a Kubernetes object/,
      ],
      ['kind: ConfigMap\nmetadata: { name: a }', /document 1: not a Kubernetes object: apiVersion is missing/],
    ] as const) {
      assert.throws(
        () => parseManifests(text),
        (err: unknown) =>
          err instanceof OperationError && err.statusCode === 400 && err.reason === 'InvalidManifest' && message.test(err.message),
        text,
      );
    }
  });
});

describe('resource paths', () => {
  // hostile-input regression: encodeURIComponent threw a URIError on a lone surrogate, reported as 500 InternalError
  test('a name or namespace with a lone surrogate is a 400 BadRequest, not a URIError', () => {
    const configMaps = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
    assert.equal(resourcePath(configMaps, 'web', 'a b'), '/api/v1/namespaces/web/configmaps/a%20b');
    for (const [namespace, name] of [
      ['default', 'x\udf33'],
      ['\ud800', 'x'],
    ]) {
      assert.throws(
        () => resourcePath(configMaps, namespace, name),
        (err: unknown) => err instanceof OperationError && err.statusCode === 400 && /lone surrogate/.test(err.message),
      );
    }
  });
});

describe('result cache', () => {
  test('bounded in count (oldest out) and in age', () => {
    let now = 0;
    const cache = createResultCache(2, 1000, () => now);
    const result = (id: string) => ({ id }) as OperationResult;
    cache.set('a', result('a'));
    cache.set('b', result('b'));
    cache.set('c', result('c'));
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.get('b')?.id, 'b');
    now = 1500;
    assert.equal(cache.get('c'), undefined);
    assert.equal(durationFromMs(1234.5678).seconds, 1n);
    assert.equal(durationFromMs(1234.5678).nanos, 234_568_000);
  });
});

/** A client that records every call and can act between calls (to simulate other writers). */
function recordingClient(base: KubeClient, hook?: (request: KubeRequest, count: number) => void | Promise<void>, countPath?: string) {
  const calls: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const client: KubeClient = {
    ...base,
    async request(request) {
      calls.push(`${request.method} ${request.path}`);
      const counted = countPath === undefined || request.path === countPath;
      if (counted) inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        return await base.request(request);
      } finally {
        if (counted) inFlight--;
        await hook?.(request, calls.length);
      }
    },
  };
  return { client, calls, maxInFlight: () => maxInFlight };
}

function operation(id: string, spec: Operation['spec']): Operation {
  return create(OperationSchema, { id, account: 'sandbox', spec });
}

async function withSandbox(fn: (sb: Sandbox, base: KubeClient) => Promise<void>): Promise<void> {
  const sb = await startSandbox({ seed: 'none' });
  const base = createKubeClient(sb.kubeConfig());
  try {
    await fn(sb, base);
  } finally {
    base.close();
    await sb.close();
  }
}

describe('executor retries against the sandbox', () => {
  const manifest = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: c, namespace: default }\ndata: { ${data} }`;
  const exec = (client: KubeClient, op: Operation, maxAttempts = 3) =>
    executeOperation(op, {
      client,
      resolver: createResourceResolver(),
      settings,
      retries: { maxAttempts, backoffMs: 5 },
      signal: new AbortController().signal,
      timeoutMs: 30_000,
    });

  test('apply: a change between read and write is a 409 Conflict, retried on a fresh read, and then succeeds', async () => {
    await withSandbox(async (sb, base) => {
      const plain = await exec(base, operation('create', { case: 'apply', value: { manifests: manifest('a: "1"') } as never }));
      assert.equal(plain.statusCode, 201);
      let bumped = false;
      const { client, calls } = recordingClient(base, (request) => {
        if (!bumped && request.method === 'GET' && request.path === '/api/v1/namespaces/default/configmaps/c') {
          bumped = true;
          const live = sb.store.get('v1', 'ConfigMap', 'default', 'c')!;
          sb.store.update({ ...live, metadata: { ...live.metadata, labels: { bumped: 'yes' } } });
        }
      });
      const result = await exec(client, operation('update', { case: 'apply', value: { manifests: manifest('a: "2"') } as never }));
      assert.equal(result.success, true, result.message);
      assert.equal(result.statusCode, 200);
      assert.equal(calls.filter((c) => c.startsWith('PATCH')).length, 2, 'the first write got 409, the second went through');
      const stored = sb.store.get('v1', 'ConfigMap', 'default', 'c')!;
      assert.deepEqual([stored.data, stored.metadata.labels], [{ a: '2' }, { bumped: 'yes' }]);
    });
  });

  test('apply: an object created between the read and the create (409 AlreadyExists) is patched instead', async () => {
    await withSandbox(async (sb, base) => {
      let created = false;
      const { client, calls } = recordingClient(base, (request) => {
        if (!created && request.method === 'GET' && request.path === '/api/v1/namespaces/default/configmaps/c') {
          created = true;
          sb.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { other: 'x' } });
        }
      });
      const result = await exec(client, operation('race', { case: 'apply', value: { manifests: manifest('a: "1"') } as never }));
      assert.equal(result.success, true, result.message);
      assert.deepEqual(
        calls.filter((c) => !c.startsWith('GET /api') || c.includes('configmaps')).map((c) => c.split(' ')[0]),
        ['GET', 'POST', 'GET', 'PATCH'],
      );
      assert.deepEqual(sb.store.get('v1', 'ConfigMap', 'default', 'c')!.data, { other: 'x', a: '1' });
    });
  });

  test('5xx is retried up to maxAttempts; other 4xx answers are not retried', async () => {
    await withSandbox(async (sb, base) => {
      const resolver = createResourceResolver();
      const run = (client: KubeClient, op: Operation) =>
        executeOperation(op, {
          client,
          resolver,
          settings,
          retries: { maxAttempts: 3, backoffMs: 5 },
          signal: new AbortController().signal,
          timeoutMs: 30_000,
        });
      const get = operation('get', { case: 'get', value: { kind: 'ConfigMap', namespace: 'default', name: 'missing' } as never });
      const warm = await run(base, get); // discovery cached
      assert.equal(warm.statusCode, 404);
      const notFound = recordingClient(base);
      assert.equal((await run(notFound.client, get)).statusCode, 404);
      assert.equal(notFound.calls.length, 1, '404 is the answer, not retried');
      sb.faults.setErrorRate(1);
      const failing = recordingClient(base);
      const failed = await run(failing.client, get);
      sb.faults.setErrorRate(0);
      assert.deepEqual([failed.success, failed.statusCode, failed.reason], [false, 500, 'InternalError']);
      assert.match(failed.message, /injected fault/);
      assert.equal(failing.calls.length, 3);
    });
  });

  test('a result over the stream limit (measured without encoding its objects) is a 413 ResultTooLarge; one under it is sent', async () => {
    await withSandbox(async (_sb, base) => {
      const big = 'x'.repeat(500 * 1024);
      for (const name of ['big-1', 'big-2', 'big-3', 'big-4']) {
        const created = await exec(
          base,
          operation(`c-${name}`, {
            case: 'apply',
            value: { manifests: manifest(`v: "${big}"`).replace('name: c', `name: ${name}`) } as never,
          }),
        );
        assert.ok(created.success, created.message);
      }
      const list = (id: string, limit: number) =>
        exec(base, operation(id, { case: 'list', value: { kind: 'ConfigMap', namespace: 'default', limit } as never }));
      const fits = await list('l-3', 3);
      assert.deepEqual([fits.success, fits.objects.length], [true, 3]);
      assert.ok(toBinary(OperationResultSchema, fits).length <= MAX_RESULT_BYTES);
      const over = await list('l-4', 4);
      assert.deepEqual([over.success, over.statusCode, over.reason, over.objects.length], [false, 413, 'ResultTooLarge', 0]);
      assert.match(over.message, /over the 3670016 bytes a stream message may carry/);
    });
  });
});

describe('operation runner', () => {
  test('runs at most `concurrency` operations at once and delivers every result; waits in the outbox while detached', async () => {
    await withSandbox(async (sb, base) => {
      sb.faults.setLatency(30);
      const recorder = recordingClient(base, undefined, '/api/v1/namespaces');
      const runner = createOperationRunner({
        account: (name) => (name === 'sandbox' ? { client: recorder.client } : { notServed: 'no' }),
        settings,
        retries: { maxAttempts: 1, backoffMs: 0 },
        concurrency: 2,
        resultCacheSize: 100,
        resultTtlMs: 60_000,
        outboxSize: 100,
        logger: createSilentLogger(),
      });
      try {
        for (let i = 0; i < 6; i++) runner.submit(operation(`list-${i}`, { case: 'list', value: { kind: 'Namespace' } as never }));
        assert.equal(runner.active, 6);
        const deadline = Date.now() + 30_000;
        while (runner.pending < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        assert.equal(runner.pending, 6, 'results kept while no session is attached');
        assert.ok(recorder.maxInFlight() <= 2, `at most 2 at once, saw ${recorder.maxInFlight()}`);
        const sent: OperationResult[] = [];
        runner.attach((r) => sent.push(r));
        assert.deepEqual(sent.map((r) => r.id).sort(), ['list-0', 'list-1', 'list-2', 'list-3', 'list-4', 'list-5']);
        assert.ok(sent.every((r) => r.success && r.objects.length >= 4));
        runner.submit(operation('list-0', { case: 'list', value: { kind: 'Namespace' } as never }));
        assert.equal(sent.length, 7, 'a redelivered id is answered from the cache at once');
      } finally {
        await runner.close();
      }
    });
  });
});
