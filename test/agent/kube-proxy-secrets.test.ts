/**
 * The agent's Secret policy for kubectl through the gateway (`kubeProxy.secrets`), against a real sandbox, with the
 * caller allowed everything by the cluster's RBAC (a static identity in system:masters), so what is refused is
 * refused by the policy. Under `deny` (the default) reads that would return Secret values are refused with a message
 * naming the setting and the account — whatever the path's spelling — metadata-only reads work and carry no value
 * (not even in kubectl's last-applied annotation), writes pass and their answers carry no value, and JSON patches
 * reading the values are refused before they reach the cluster. Under `allow` the values come back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { eventually } from '../../testkit/eventually.js';
import { answerOf, cancel, drive, partsOf, proxyAccount, proxyFor } from './kube-proxy-driver.js';

const VALUE = 'outpost-secret-marker-7f3a';
const MARKER = Buffer.from(VALUE).toString('base64');
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const ADMIN = { identity: 'static', user: 'ops', groups: ['system:masters'] };

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ seed: 'demo' });
  sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vault' } });
  sandbox.store.create(secret('db'));
});
after(async () => {
  await sandbox?.close();
});

/** A Secret holding the marker, with the annotation `kubectl apply` writes (which repeats it). */
function secret(name: string) {
  const applied = { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'vault' }, data: { password: MARKER } };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'vault', annotations: { team: 'payments', [LAST_APPLIED]: JSON.stringify(applied) } },
    type: 'Opaque',
    data: { password: MARKER },
  };
}

function assertNoValue(text: string, what: string) {
  assert.ok(!text.includes(MARKER) && !text.includes(VALUE), `${what}: a Secret value came back: ${text.slice(0, 300)}`);
}

const accounts = () => [
  proxyAccount('sandbox', sandbox.kubeConfig(), ADMIN),
  proxyAccount('open', sandbox.kubeConfig(), { ...ADMIN, secrets: 'allow' }),
];

describe('kubeProxy.secrets: deny (the default)', () => {
  test('reads that would return values are refused, naming the setting and the account, in every spelling; nothing else is', async () => {
    const { proxy, out } = proxyFor(accounts());
    const refused: Array<[string, string, Array<[string, string]>?]> = [
      ['GET', '/api/v1/namespaces/vault/secrets/db'],
      ['GET', '/api/v1/namespaces/vault/secrets/db', [['accept', 'application/vnd.kubernetes.protobuf, application/json']]],
      ['GET', '/api/v1/namespaces/vault/secrets/db', [['accept', 'application/yaml']]],
      ['HEAD', '/api/v1/namespaces/vault/secrets/db'],
      ['GET', '/api/v1/namespaces/vault/secrets'],
      ['GET', '/api/v1/namespaces/vault/secrets', [['accept', 'application/vnd.kubernetes.protobuf']]],
      ['GET', '/api/v1/secrets'],
      ['GET', '/api/v1/namespaces/vault/secrets?watch=1'],
      ['GET', '/api/v1/watch/namespaces/vault/secrets'],
      ['GET', '/api/v1/watch/namespaces/vault/secrets/db'],
      ['GET', '/api/v1/namespaces/vault/secrets?includeObject=Object', [['accept', TABLE_ACCEPT]]],
      ['GET', '/api/v1/namespaces/vault/secrets?watch=1', [['accept', 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io']]],
      ['GET', '/api/v1/namespaces/vault/secr%65ts'],
      ['GET', '/api\\v1\\namespaces\\vault\\secrets'],
      ['GET', '/api/v1/namespaces%2Fvault%2Fsecrets'],
    ];
    for (const [i, [method, path, headers]] of refused.entries()) {
      const id = BigInt(i + 1);
      await drive(proxy, out, id, { method, path, headers });
      const answer = await answerOf(out, id);
      assert.equal(answer.status, 0, `${method} ${path}: nothing of the cluster's answer came back`);
      assert.equal(answer.code, 'refused', `${method} ${path}`);
      // Paths another parser would read as a Secrets path are refused by the path rules first (docs/kubectl.md, "Paths").
      assert.match(answer.error, /kubeProxy\.secrets is "deny" for account "sandbox"|the path holds/, `${method} ${path}`);
      assertNoValue(answer.error, path);
    }

    // One Secret is the cluster's to answer first: one that does not exist is its 404 (kubectl apply of a new Secret
    // needs it), a read its RBAC refuses is its 403.
    await drive(proxy, out, 100n, { path: '/api/v1/namespaces/vault/secrets/nothing' });
    const notFound = await answerOf(out, 100n);
    assert.equal(notFound.status, 404);
    assert.equal(JSON.parse(notFound.body).reason, 'NotFound');
    const caller = proxyFor([proxyAccount('sandbox', sandbox.kubeConfig())]);
    await drive(caller.proxy, caller.out, 101n, { path: '/api/v1/namespaces/vault/secrets/db', user: 'outpost:alice' });
    const denied = await answerOf(caller.out, 101n);
    assert.equal(denied.status, 403, 'outpost:alice may not read Secrets at all');
    assert.match(denied.body, /cannot get resource \\"secrets\\"/);

    // Another group's resource that happens to be called secrets is not a Kubernetes Secret.
    sandbox.store.create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'secrets.vault.example.com' },
      spec: {
        group: 'vault.example.com',
        scope: 'Namespaced',
        names: { plural: 'secrets', singular: 'secret', kind: 'VaultSecret', listKind: 'VaultSecretList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    });
    const reference = {
      apiVersion: 'vault.example.com/v1',
      kind: 'VaultSecret',
      metadata: { name: 'ref', namespace: 'vault' },
      path: 'kv/db',
    };
    await eventually('the custom kind is served', () => sandbox.store.create(reference));
    await drive(proxy, out, 102n, { path: '/apis/vault.example.com/v1/namespaces/vault/secrets/ref' });
    const custom = await answerOf(out, 102n);
    assert.equal(custom.status, 200, custom.error);
    assert.equal(JSON.parse(custom.body).path, 'kv/db');
  });

  test('deleting a collection of Secrets is refused before it reaches the cluster', async () => {
    const { proxy, out } = proxyFor(accounts());
    await drive(proxy, out, 1n, { method: 'DELETE', path: '/api/v1/namespaces/vault/secrets' });
    const answer = await answerOf(out, 1n);
    assert.equal(answer.code, 'refused');
    assert.match(answer.error, /kubeProxy\.secrets.*deleting a collection of Secrets is refused/);
    assert.ok(sandbox.store.get('v1', 'Secret', 'vault', 'db'), 'the Secret is still there');
  });

  test('an upgraded request on Secrets is refused', async () => {
    const { proxy, out } = proxyFor(accounts());
    await drive(proxy, out, 1n, { path: '/api/v1/namespaces/vault/secrets?watch=1', upgrade: true });
    assert.match((await answerOf(out, 1n)).error, /kubeProxy\.secrets.*upgraded \(WebSocket\) request on Secrets/);
  });

  test('metadata-only reads work and carry no value, not even in the last-applied annotation', async () => {
    const { proxy, out } = proxyFor(accounts());
    await drive(proxy, out, 1n, { path: '/api/v1/namespaces/vault/secrets', headers: [['accept', TABLE_ACCEPT]] });
    const table = await answerOf(out, 1n);
    assert.equal(table.status, 200, table.error);
    assert.equal(table.code, '');
    const json = JSON.parse(table.body);
    assert.equal(json.kind, 'Table');
    const row = json.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'db');
    assert.deepEqual(row.cells.slice(0, 3), ['db', 'Opaque', 1]);
    assert.equal(row.object.kind, 'PartialObjectMetadata');
    assert.deepEqual(row.object.metadata.annotations, { team: 'payments' }, 'other annotations stay');
    assert.ok(!table.headers.some((h) => h.name === 'content-length'), 'the length of the rewritten answer is not the cluster’s');
    assertNoValue(table.body, 'the table');

    await drive(proxy, out, 2n, {
      path: '/api/v1/namespaces/vault/secrets',
      headers: [['accept', 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json']],
    });
    const list = await answerOf(out, 2n);
    assert.equal(list.status, 200, list.error);
    assert.equal(JSON.parse(list.body).kind, 'PartialObjectMetadataList');
    assertNoValue(list.body, 'the PartialObjectMetadataList');

    await drive(proxy, out, 3n, {
      path: '/api/v1/namespaces/vault/secrets/db',
      headers: [['accept', 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1']],
    });
    const one = await answerOf(out, 3n);
    assert.equal(JSON.parse(one.body).metadata.name, 'db');
    assertNoValue(one.body, 'the PartialObjectMetadata');

    await drive(proxy, out, 4n, { method: 'HEAD', path: '/api/v1/namespaces/vault/secrets', headers: [['accept', TABLE_ACCEPT]] });
    assert.equal((await answerOf(out, 4n)).status, 200, 'HEAD as a table');
  });

  test('a table watch streams events without values', async () => {
    const { proxy, out } = proxyFor(accounts());
    await drive(proxy, out, 1n, { path: '/api/v1/namespaces/vault/secrets?watch=1', headers: [['accept', TABLE_ACCEPT]] });
    await eventually('the first event', () => partsOf(out, 1n).body.includes('"ADDED"') || undefined);
    sandbox.store.create(secret('watched'));
    const events = await eventually('the new Secret in the watch', () => {
      const parts = partsOf(out, 1n);
      const lines = parts.body.split('\n').filter(Boolean);
      return lines.some((l) => l.includes('"watched"')) ? lines.map((l) => JSON.parse(l)) : undefined;
    });
    cancel(proxy, 1n);
    assert.equal(partsOf(out, 1n).status, 200);
    for (const event of events) assert.equal(event.object.kind, 'Table');
    assertNoValue(JSON.stringify(events), 'the watch');
  });

  test('writes pass and their answers carry no value', async () => {
    const { proxy, out } = proxyFor(accounts());
    const created = secret('written');
    await drive(proxy, out, 1n, {
      method: 'POST',
      path: '/api/v1/namespaces/vault/secrets',
      headers: [
        ['content-type', 'application/json'],
        ['accept', 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json'],
      ],
      body: JSON.stringify({ ...created, stringData: { extra: VALUE } }),
    });
    const create = await answerOf(out, 1n);
    assert.equal(create.status, 201, create.body || create.error);
    const body = JSON.parse(create.body);
    assert.equal(body.kind, 'Secret');
    assert.equal(body.data, undefined);
    assert.equal(body.stringData, undefined);
    assert.deepEqual(body.metadata.annotations, { team: 'payments' });
    const stored = sandbox.store.get('v1', 'Secret', 'vault', 'written') as { data?: Record<string, string> } | undefined;
    assert.equal(stored?.data?.password, MARKER, 'the cluster has the value');

    await drive(proxy, out, 2n, {
      method: 'PATCH',
      path: '/api/v1/namespaces/vault/secrets/written',
      headers: [['content-type', 'application/merge-patch+json']],
      body: JSON.stringify({ metadata: { labels: { patched: 'yes' } } }),
    });
    const patched = await answerOf(out, 2n);
    assert.equal(patched.status, 200, patched.body || patched.error);
    assert.equal(JSON.parse(patched.body).metadata.labels.patched, 'yes');

    const live = sandbox.store.get('v1', 'Secret', 'vault', 'written')!;
    await drive(proxy, out, 3n, {
      method: 'PUT',
      path: '/api/v1/namespaces/vault/secrets/written',
      headers: [['content-type', 'application/json']],
      body: JSON.stringify({ ...live, data: { password: MARKER, more: MARKER } }),
    });
    const updated = await answerOf(out, 3n);
    assert.equal(updated.status, 200, updated.body || updated.error);

    await drive(proxy, out, 4n, { method: 'DELETE', path: '/api/v1/namespaces/vault/secrets/written' });
    const deleted = await answerOf(out, 4n);
    assert.equal(deleted.status, 200, deleted.body || deleted.error);
    assert.equal(sandbox.store.get('v1', 'Secret', 'vault', 'written'), undefined);
    for (const answer of [create, patched, updated, deleted]) assertNoValue(answer.body, 'a write');
  });

  test('a JSON patch reading the values is refused before it reaches the cluster; one that only writes passes', async () => {
    const { proxy, out } = proxyFor(accounts());
    const before = JSON.stringify(sandbox.store.get('v1', 'Secret', 'vault', 'db'));
    const patches: unknown[] = [
      [{ op: 'copy', from: '/data/password', path: '/metadata/annotations/leak' }],
      [{ op: 'move', from: '/data', path: '/metadata/labels' }],
      [{ op: 'test', path: '/data/password', value: MARKER }],
      [{ op: 'copy', from: '', path: '/metadata/annotations/leak' }],
      [{ op: 'copy', from: `/metadata/annotations/${LAST_APPLIED.replace('/', '~1')}`, path: '/metadata/name' }],
    ];
    for (const [i, patch] of patches.entries()) {
      const id = BigInt(i + 1);
      await drive(proxy, out, id, {
        method: 'PATCH',
        path: '/api/v1/namespaces/vault/secrets/db',
        headers: [['content-type', 'application/json-patch+json']],
        body: JSON.stringify(patch),
      });
      const answer = await answerOf(out, id);
      assert.equal(answer.code, 'refused', JSON.stringify(patch));
      assert.match(answer.error, /kubeProxy\.secrets is "deny" for account "sandbox".*JSON patch of a Secret reading its values/);
      assertNoValue(answer.error, 'the refusal');
    }
    assert.equal(JSON.stringify(sandbox.store.get('v1', 'Secret', 'vault', 'db')), before, 'the Secret is unchanged');

    // A body larger than the initial credit: held, credited as it arrives, checked, then sent.
    const big = 'x'.repeat(400 * 1024);
    await drive(proxy, out, 10n, {
      method: 'PATCH',
      path: '/api/v1/namespaces/vault/secrets/db',
      headers: [['content-type', 'application/json-patch+json']],
      body: JSON.stringify([{ op: 'add', path: '/metadata/annotations/big', value: big }]),
    });
    const allowed = await answerOf(out, 10n);
    assert.equal(allowed.status, 200, allowed.body || allowed.error);
    assert.equal(JSON.parse(allowed.body).metadata.annotations.big, big);
    assertNoValue(allowed.body, 'the patched Secret');
  });
});

describe('kubeProxy.secrets: allow', () => {
  test("the same reads return the values: the cluster's RBAC decides", async () => {
    const { proxy, out } = proxyFor(accounts());
    const reads: Array<[string, Array<[string, string]>?]> = [
      ['/api/v1/namespaces/vault/secrets/db'],
      ['/api/v1/namespaces/vault/secrets'],
      ['/api/v1/secrets'],
      ['/api/v1/namespaces/vault/secrets?includeObject=Object', [['accept', TABLE_ACCEPT]]],
    ];
    for (const [i, [path, headers]] of reads.entries()) {
      const id = BigInt(i + 1);
      await drive(proxy, out, id, { account: 'open', path, headers });
      const answer = await answerOf(out, id);
      assert.equal(answer.status, 200, `${path}: ${answer.error}`);
      assert.ok(answer.body.includes(MARKER), `${path} returns the value`);
    }
    await drive(proxy, out, 9n, {
      account: 'open',
      method: 'PATCH',
      path: '/api/v1/namespaces/vault/secrets/db',
      headers: [['content-type', 'application/json-patch+json']],
      body: JSON.stringify([{ op: 'test', path: '/data/password', value: MARKER }]),
    });
    assert.equal((await answerOf(out, 9n)).status, 200, 'a JSON patch testing a value runs');
  });
});
