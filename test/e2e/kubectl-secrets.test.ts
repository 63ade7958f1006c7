/**
 * Secrets through `/k8s`, end to end with the real kubectl (the newest installed) and raw HTTPS requests: a TLS
 * gateway, an agent serving one sandbox as two accounts — `sandbox` with the default `kubeProxy.secrets: deny`,
 * `second` with `allow` — and RBAC letting the caller (alice) do anything with Secrets in namespace `vault`, so what
 * is refused under deny is refused by the policy. A Secret holding a marker value, applied with `kubectl apply` (its
 * last-applied annotation repeats the value), must never come back under deny: not in a read, a table, a watch, a
 * write's answer or an error. Under allow the cluster's RBAC decides and the values come back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../../testkit/eventually.js';
import type { Kubectl } from '../../testkit/kubectl-runner.js';
import { auditEvents, gatewayKubectl, httpsRequest, KUBECTLS, startKubeStack, TOKENS, type KubeStack } from './kubectl-helpers.js';

const newest = KUBECTLS.at(-1);
const VALUES = ['outpost-e2e-marker-1', 'outpost-e2e-marker-2', 'outpost-e2e-marker-3', 'outpost-e2e-marker-4'];
/** Every form a value could come back in: as written and base64 (Secret data). */
const FORMS = VALUES.flatMap((v) => [v, Buffer.from(v).toString('base64')]);
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

const RBAC = `apiVersion: v1
kind: Namespace
metadata: {name: vault}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: secrets-editor, namespace: vault}
rules:
- apiGroups: [""]
  resources: [secrets]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: secrets-editor, namespace: vault}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: secrets-editor}
subjects:
- {kind: Group, name: "outpost:devs", apiGroup: rbac.authorization.k8s.io}
`;

function secretManifest(name: string, value: string): string {
  const data = Buffer.from(value).toString('base64');
  return `apiVersion: v1\nkind: Secret\nmetadata: {name: ${name}, namespace: vault}\ntype: Opaque\ndata: {password: ${data}}\n`;
}

describe('Secrets through /k8s', { skip: newest ? false : 'no kubectl installed', concurrency: false }, () => {
  let k: KubeStack;
  let kubectl: Kubectl;
  let open: Kubectl;
  /** Everything that came back under deny. */
  const seen: string[] = [];

  /** A request to the gateway as alice. */
  const raw = async (method: string, path: string, accept: string, account = 'sandbox', body?: { type: string; text: string }) => {
    const answer = await httpsRequest(`${k.stack.gateway.httpUrl}/k8s/${account}${path}`, {
      ca: k.pki.caPem,
      method,
      headers: { authorization: `Bearer ${TOKENS.alice}`, accept, ...(body ? { 'content-type': body.type } : {}) },
      body: body?.text,
    });
    if (account === 'sandbox') seen.push(answer.body);
    return answer;
  };
  /** kubectl through account sandbox; what it printed is kept. */
  const run = async (args: string[], input?: string) => {
    const result = await kubectl.run(args, { input });
    seen.push(result.stdout, result.stderr);
    return result;
  };
  const stored = async (name: string) =>
    Buffer.from(await k.admin.ok(['get', 'secret', '-n', 'vault', name, '-o', 'jsonpath={.data.password}']), 'base64').toString('utf8');

  before(async () => {
    k = await startKubeStack({ extraAccounts: [{ name: 'second', kubeProxy: { secrets: 'allow' } }] });
    await eventually('account second ACTIVE', async () => {
      const answer = await httpsRequest(`${k.stack.gateway.httpUrl}/armory/accounts/second`, { ca: k.pki.caPem });
      return (JSON.parse(answer.body) as { state?: string }).state === 'ACTIVE' || undefined;
    });
    await k.admin.ok(['apply', '-f', '-'], { input: RBAC });
    // Client-side apply: the last-applied annotation repeats the value.
    await k.admin.ok(['apply', '-f', '-'], { input: secretManifest('db', VALUES[0]!) });
    kubectl = await gatewayKubectl(newest!.bin, k.stack.gateway.httpUrl, k.pki.caFile, TOKENS.alice);
    open = await gatewayKubectl(newest!.bin, k.stack.gateway.httpUrl, k.pki.caFile, TOKENS.alice, 'second');
  });
  after(async () => {
    kubectl?.cleanup();
    open?.cleanup();
    await k?.close();
  });

  describe('kubeProxy.secrets: deny (the default)', { concurrency: false }, () => {
    test('reads that would return values are refused with a Status naming kubeProxy.secrets and the account', async () => {
      const refusal = /Error from server \(Forbidden\): kubeProxy\.secrets is "deny" for account "sandbox"/;
      for (const args of [
        ['get', 'secret', 'db', '-n', 'vault', '-o', 'yaml'],
        ['get', 'secret', 'db', '-n', 'vault', '-o', 'json'],
        ['get', 'secrets', '-A', '-o', 'yaml'],
        ['get', 'secrets', '-n', 'vault', '-w', '-o', 'json'],
        ['get', 'secrets', '-n', 'vault', '-o', 'name'],
        ['describe', 'secret', 'db', '-n', 'vault'],
      ]) {
        const result = await run(args);
        assert.notEqual(result.code, 0, args.join(' '));
        assert.match(result.stderr, refusal, args.join(' '));
      }
      for (const [method, path, accept] of [
        ['GET', '/api/v1/namespaces/vault/secrets?includeObject=Object', TABLE_ACCEPT],
        ['GET', '/api/v1/namespaces/vault/secrets/db', 'application/vnd.kubernetes.protobuf, application/json'],
        ['GET', '/api/v1/namespaces/vault/secrets', 'application/vnd.kubernetes.protobuf'],
        ['GET', '/api/v1/watch/namespaces/vault/secrets', 'application/json'],
        ['DELETE', '/api/v1/namespaces/vault/secrets', 'application/json'],
      ] as const) {
        const answer = await raw(method, path, accept);
        assert.equal(answer.status, 403, `${method} ${path}`);
        const status = JSON.parse(answer.body) as { kind: string; reason: string; message: string };
        assert.equal(status.kind, 'Status');
        assert.equal(status.reason, 'Forbidden');
        assert.match(status.message, /kubeProxy\.secrets is "deny" for account "sandbox"/);
      }
      assert.equal(await stored('db'), VALUES[0], 'deleting the collection was refused: the Secret is still there');
    });

    test('kubectl get secrets (a table), a table watch and a PartialObjectMetadataList read work', async () => {
      const table = await run(['get', 'secrets', '-n', 'vault']);
      assert.equal(table.code, 0, table.stderr);
      assert.match(table.stdout, /^db\s+Opaque\s+1\s+/m);
      const watch = kubectl.stream(['get', 'secrets', '-n', 'vault', '-w']);
      try {
        await watch.waitFor(/^db\s+Opaque/m);
        await k.admin.ok(['apply', '-f', '-'], { input: secretManifest('watched', VALUES[3]!) });
        await watch.waitFor(/^watched\s+Opaque/m);
      } finally {
        watch.stop();
        seen.push(watch.output());
      }
      const partial = await raw(
        'GET',
        '/api/v1/namespaces/vault/secrets',
        'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
      );
      assert.equal(partial.status, 200, partial.body);
      const list = JSON.parse(partial.body) as { kind: string; items: Array<{ metadata: { name: string; annotations?: object } }> };
      assert.equal(list.kind, 'PartialObjectMetadataList');
      const db = list.items.find((i) => i.metadata.name === 'db')!;
      assert.ok(!(LAST_APPLIED in (db.metadata.annotations ?? {})), 'the last-applied annotation repeats the value: removed');
    });

    test('create and apply of a new Secret work, their answers carry no value; apply of an existing one is refused, apply --server-side works', async () => {
      const created = await run(['create', '-f', '-', '-o', 'json'], secretManifest('made', VALUES[1]!));
      assert.equal(created.code, 0, created.stderr);
      assert.equal((JSON.parse(created.stdout) as { data?: object }).data, undefined, 'the answer carries no data');
      assert.equal(await stored('made'), VALUES[1]);

      const fresh = await run(['apply', '-f', '-'], secretManifest('fresh', VALUES[1]!));
      assert.equal(fresh.code, 0, fresh.stderr);
      assert.match(fresh.stdout, /secret\/fresh created/);
      assert.equal(await stored('fresh'), VALUES[1]);

      const existing = await run(['apply', '-f', '-'], secretManifest('db', VALUES[2]!));
      assert.notEqual(existing.code, 0);
      assert.match(existing.stderr, /kubeProxy\.secrets is "deny" for account "sandbox"/);
      assert.equal(await stored('db'), VALUES[0], 'unchanged');

      const serverSide = await run(['apply', '--server-side', '--force-conflicts', '-f', '-'], secretManifest('db', VALUES[2]!));
      assert.equal(serverSide.code, 0, serverSide.stderr);
      assert.match(serverSide.stdout, /secret\/db serverside-applied/);
      assert.equal(await stored('db'), VALUES[2]);

      // kubectl patch (label, annotate, edit) reads the Secret first: refused at that read.
      const labelled = await run(['patch', 'secret', 'db', '-n', 'vault', '--type=merge', '-p', '{"metadata":{"labels":{"team":"x"}}}']);
      assert.notEqual(labelled.code, 0);
      assert.match(labelled.stderr, /kubeProxy\.secrets is "deny" for account "sandbox".*reading a Secret as an object/);
      const merged = await raw('PATCH', '/api/v1/namespaces/vault/secrets/db', 'application/json', 'sandbox', {
        type: 'application/merge-patch+json',
        text: '{"metadata":{"labels":{"team":"x"}}}',
      });
      assert.equal(merged.status, 200, merged.body);
      const patched = JSON.parse(merged.body) as { data?: object; metadata: { labels: { team: string } } };
      assert.equal(patched.metadata.labels.team, 'x');
      assert.equal(patched.data, undefined, 'the answer to a patch carries no data');

      const deleted = await run(['delete', 'secret', 'made', '-n', 'vault']);
      assert.equal(deleted.code, 0, deleted.stderr);
    });

    test('a JSON patch copying a value into an annotation is refused, and the Secret is unchanged', async () => {
      const before = await k.admin.ok(['get', 'secret', 'db', '-n', 'vault', '-o', 'json']);
      const copy = '[{"op":"copy","from":"/data/password","path":"/metadata/annotations/leak"}]';
      const answer = await raw('PATCH', '/api/v1/namespaces/vault/secrets/db', 'application/json', 'sandbox', {
        type: 'application/json-patch+json',
        text: copy,
      });
      assert.equal(answer.status, 403);
      const status = JSON.parse(answer.body) as { reason: string; message: string };
      assert.equal(status.reason, 'Forbidden');
      assert.match(status.message, /kubeProxy\.secrets is "deny" for account "sandbox".*JSON patch of a Secret reading its values/);
      assert.equal(await k.admin.ok(['get', 'secret', 'db', '-n', 'vault', '-o', 'json']), before);
    });

    test('no value came back in anything above, and the audit log shows the refusals', async () => {
      for (const text of seen) for (const form of FORMS) assert.ok(!text.includes(form), `a Secret value came back: ${text.slice(0, 300)}`);
      const events = await eventually('the refusals in the audit log', async () => {
        const all = await auditEvents(k.stack.gateway.httpUrl, k.pki.caPem, 'token:alice');
        return all.some((e) => e.verb === 'deletecollection') ? all : undefined;
      });
      const refused = events.filter((e) => e.account === 'sandbox' && e.resource === 'secrets' && e.status === 403);
      for (const verb of ['get', 'list', 'watch', 'deletecollection', 'patch']) {
        const event = refused.find((e) => e.verb === verb);
        assert.ok(event, `a refused ${verb}`);
        assert.match(event.error ?? '', /kubeProxy\.secrets/);
      }
    });
  });

  describe('kubeProxy.secrets: allow', { concurrency: false }, () => {
    test("the same reads return the values; the cluster's RBAC decides", async () => {
      assert.match(
        await open.ok(['get', 'secret', 'db', '-n', 'vault', '-o', 'yaml']),
        new RegExp(Buffer.from(VALUES[2]!).toString('base64')),
      );
      assert.ok((await open.ok(['get', 'secrets', '-n', 'vault', '-o', 'json'])).includes(Buffer.from(VALUES[1]!).toString('base64')));
      const rows = await raw('GET', '/api/v1/namespaces/vault/secrets?includeObject=Object', TABLE_ACCEPT, 'second');
      assert.equal(rows.status, 200);
      assert.ok(rows.body.includes(Buffer.from(VALUES[2]!).toString('base64')));
      const clusterWide = await open.run(['get', 'secrets', '-A', '-o', 'yaml']);
      assert.notEqual(clusterWide.code, 0);
      assert.match(clusterWide.stderr, /User "outpost:alice" cannot list resource "secrets" in API group "" at the cluster scope/);
      const apply = await open.run(['apply', '-f', '-'], { input: secretManifest('db', VALUES[3]!) });
      assert.equal(apply.code, 0, apply.stderr);
      assert.equal(await stored('db'), VALUES[3], 'client-side apply of an existing Secret works');
    });
  });
});
