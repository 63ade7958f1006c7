/**
 * How the agent reads a proxied request against `kubeProxy.secrets` (pure: no cluster): which paths name the core
 * group's Secrets in any reading a server may make of them, which Accept alternatives a metadata-only read keeps (in
 * the caller's order, canonically written), and what each method is allowed under `deny`; `allow` changes nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accountSchema } from '../../src/agent/config/schema.js';
import { metadataAccept } from '../../src/agent/kube-proxy/metadata-accept.js';
import { secretGuard } from '../../src/agent/kube-proxy/secret-request.js';

const deny = accountSchema.parse({ name: 'prod', serviceAccount: true });
const allow = accountSchema.parse({ name: 'prod', serviceAccount: true, kubeProxy: { secrets: 'allow' } });
const guard = (method: string, path: string, accept = 'application/json', config = deny) =>
  secretGuard(config, { method, path, headers: [{ name: 'Accept', value: accept }], upgrade: false });
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

test('paths naming Secrets in any reading are guarded; other resources and groups pass', () => {
  const secrets = [
    '/api/v1/secrets',
    '/api/v1/namespaces/a/secrets',
    '/api/v1/namespaces/a/secrets/',
    '/api/v1/namespaces/a/secrets?limit=500',
    '/api/v1/watch/secrets',
    '/api/v1/watch/namespaces/a/secrets/x',
    '/api/v2/namespaces/a/secrets',
    '/api/v1/namespaces//secrets',
    '/api//v1/namespaces/a/secrets',
    '/api/v1/namespaces/a/secr%65ts',
    '/api/v1/namespaces%2Fa%2Fsecrets',
    '/api\\v1\\namespaces\\a\\secrets',
    '/api/v1/namespaces/a/pods/%2E%2E%2Fsecrets',
    '/api/v1/proxy/namespaces/a/secrets',
  ];
  for (const path of secrets) assert.match(guard('GET', path).refusal ?? '', /kubeProxy\.secrets is "deny" for account "prod"/, path);
  const others = [
    '/api/v1/namespaces/secrets',
    '/api/v1/namespaces/secrets/pods',
    '/api/v1/namespaces/a/configmaps/secrets',
    '/apis/vault.example.com/v1/namespaces/a/secrets',
    '/apis/secrets/v1/namespaces/a/pods',
    '/version',
    '/api',
  ];
  for (const path of others) {
    const g = guard('GET', path);
    assert.equal(g.refusal, undefined, path);
    assert.equal(g.holdsBody, false, path);
  }
  for (const path of secrets) assert.equal(guard('GET', path, 'application/json', allow).refusal, undefined, `allow: ${path}`);
});

test('what each method may do under deny', () => {
  const ns = '/api/v1/namespaces/a/secrets';
  assert.equal(guard('GET', `${ns}/x`).refusal, undefined, 'one Secret: sent, its answer decides');
  assert.ok(guard('GET', ns).refusal, 'a list as objects');
  assert.ok(
    guard('GET', `${ns}?watch=true`, TABLE.replace('Table', 'PartialObjectMetadataList')).refusal,
    'a watch cannot convert to a list',
  );
  assert.equal(guard('GET', `${ns}?watch=true`, TABLE).refusal, undefined);
  assert.equal(guard('HEAD', ns, TABLE).refusal, undefined);
  assert.ok(guard('HEAD', ns).refusal);
  assert.match(guard('DELETE', ns).refusal!, /deleting a collection/);
  assert.match(guard('DELETE', '/api/v1/namespaces//secrets').refusal!, /deleting a collection/, 'named in one reading only');
  for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) assert.equal(guard(method, `${ns}/x`).refusal, undefined, method);
  assert.equal(guard('PATCH', `${ns}/x`).holdsBody, true);
  assert.equal(guard('PUT', `${ns}/x`).holdsBody, false);
  const upgrade = secretGuard(deny, { method: 'GET', path: `${ns}?watch=1`, headers: [], upgrade: true });
  assert.match(upgrade.refusal!, /upgraded/);
});

test('outgoing headers: the kept Accept alternatives, no compression; writes ask for plain JSON', () => {
  const headers: Record<string, string | string[]> = { accept: 'x', 'accept-encoding': 'gzip', other: 'kept' };
  guard('GET', '/api/v1/secrets', `${TABLE},application/json`).rewriteHeaders(headers);
  assert.deepEqual(headers, { accept: TABLE, other: 'kept' });
  const write: Record<string, string | string[]> = { accept: TABLE, 'accept-encoding': 'gzip' };
  guard('POST', '/api/v1/namespaces/a/secrets').rewriteHeaders(write);
  assert.deepEqual(write, { accept: 'application/json' });
});

test('a held JSON patch body is checked by its content type, or as an array whatever the content type', () => {
  const patch = (contentType: string) =>
    secretGuard(deny, {
      method: 'PATCH',
      path: '/api/v1/namespaces/a/secrets/x',
      headers: [{ name: 'Content-Type', value: contentType }],
      upgrade: false,
    });
  const reading = Buffer.from(JSON.stringify([{ op: 'copy', from: '/data/k', path: '/metadata/name' }]));
  assert.match(patch('application/json-patch+json').checkBody(reading)!, /JSON patch of a Secret reading its values/);
  assert.match(patch('application/merge-patch+json').checkBody(reading)!, /JSON patch of a Secret reading its values/);
  assert.match(patch('application/json-patch+json; charset=utf-8').checkBody(Buffer.from('[{'))!, /not valid JSON/);
  assert.equal(patch('application/merge-patch+json').checkBody(Buffer.from('{"data":{"k":"dg=="}}')), undefined);
  assert.equal(patch('application/apply-patch+yaml').checkBody(Buffer.from('data: {k: dg==}')), undefined);
  assert.equal(patch('application/json-patch+json').checkBody(Buffer.from('[{"op":"add","path":"/data/k","value":"dg=="}]')), undefined);
});

test('metadataAccept keeps the metadata-only alternatives the read can be converted to, in order', () => {
  const q = (text = '') => new URLSearchParams(text);
  const kubectl = `${TABLE},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`;
  assert.equal(metadataAccept([kubectl], 'list', q()), `${TABLE},application/json;as=Table;v=v1beta1;g=meta.k8s.io`);
  assert.equal(metadataAccept([kubectl], 'list', q('includeObject=None')), `${TABLE},application/json;as=Table;v=v1beta1;g=meta.k8s.io`);
  assert.equal(metadataAccept([kubectl], 'list', q('includeObject=Object')), '');
  assert.equal(metadataAccept([kubectl], 'list', q('includeObject=None&includeObject=Object')), '');
  assert.equal(metadataAccept([' Application/JSON ; g=meta.k8s.io ; as=Table ; v=v1 '], 'get', q()), TABLE);
  const client =
    'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
  assert.equal(metadataAccept([client], 'list', q()), 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io');
  assert.equal(metadataAccept([client], 'watch', q()), '');
  assert.equal(
    metadataAccept(['application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1'], 'watch', q()),
    'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
  );
  for (const bad of [
    'application/json;as=Table;as=Secret;g=meta.k8s.io;v=v1',
    'application/json;as=Table;g=example.com;v=v1',
    'application/json;as=Table;g=meta.k8s.io;v=v2',
    'application/yaml;as=Table;g=meta.k8s.io;v=v1',
    'application/json;as=Secret;g=meta.k8s.io;v=v1',
    'application/json',
    '*/*',
  ]) {
    assert.equal(metadataAccept([bad], 'list', q()), '', bad);
  }
  assert.equal(metadataAccept(['application/json', TABLE], 'get', q()), TABLE, 'several Accept headers');
});
