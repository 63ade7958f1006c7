/**
 * How the agent reads a proxied request against `kubeProxy.secrets` (pure: no cluster): which paths name the core
 * group's Secrets in any reading a server may make of them, which Accept alternatives a metadata-only read keeps (in
 * the caller's order, canonically written), and what each method is allowed under `deny`; `allow` changes nothing.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { accountSchema } from '../../src/agent/config/schema.js';
import { metadataAccept } from '../../src/agent/kube-proxy/metadata-accept.js';
import { type SecretGuard, secretGuard } from '../../src/agent/kube-proxy/secret-request.js';

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

const PARTIAL_LIST = 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io';
const HINT = 'metadata-only reads work: kubectl get secrets without -o, or Accept as=Table or as=PartialObjectMetadata';
const DENIED = 'kubeProxy.secrets is "deny" for account "prod" on its agent: Secret values stay in the cluster, so';
/** A cluster answer as the guard's `answer` sees it: a status, JSON headers, a JSON body. */
const clusterAnswer = (statusCode: number, body: unknown = {}) =>
  Object.assign(Readable.from([Buffer.from(JSON.stringify(body))]), {
    statusCode,
    headers: { 'content-type': 'application/json' },
  }) as unknown as IncomingMessage;
/** The text that goes back for a checked answer, or the error that cut it. */
const sent = (answer: ReturnType<SecretGuard['answer']>) =>
  new Promise<string>((resolve) => {
    assert.ok('body' in answer && answer.rewritten);
    let text = '';
    answer.body.on('data', (chunk) => (text += String(chunk)));
    answer.body.on('error', (err) => resolve(`error: ${err.message}`));
    answer.body.on('end', () => resolve(text));
  });
const SECRET = { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'x' }, data: { k: 'dg==' } };

test('readings only one way of reading a path finds: an encoded slash, empty segments, leading slashes, dot segments', () => {
  for (const path of [
    '/api/v1%2Fx/secrets', // as sent: the version segment holds a slash
    '//api/v1/namespaces//secrets', // empty segments kept, the leading slashes dropped
    '/api//v1/namespaces/a/secrets%2F..', // empty segments dropped, no dot segment resolved
    '/api/v1/secrets/a/b', // a subresource of a cluster-wide path
  ]) {
    const headers: Record<string, string | string[]> = { accept: 'x' };
    guard('GET', path, TABLE).rewriteHeaders(headers);
    assert.deepEqual(headers, { accept: TABLE }, `${path} is about Secrets`);
  }
  // Another group's discovery path, and paths that only look like the core group's, pass untouched.
  for (const path of ['/apis/example.com/secrets', '/api', '/api/v1', '/api/v1/namespaces', '/api/v1/namespaces/secrets/status']) {
    const g = guard('GET', path);
    assert.equal(g.refusal, undefined, path);
    const headers: Record<string, string | string[]> = { accept: 'x', 'accept-encoding': 'gzip' };
    g.rewriteHeaders(headers);
    assert.deepEqual(headers, { accept: 'x', 'accept-encoding': 'gzip' }, path);
    const res = clusterAnswer(200, SECRET);
    assert.deepEqual(g.answer(res), { body: res, rewritten: false }, path);
    assert.equal(g.checkBody(Buffer.from('[{"op":"copy","from":"/data/k","path":"/metadata/name"}]')), undefined, path);
  }
});

test('a path that does not parse as a URL, or whose percent-encoding is broken, is judged without failing', () => {
  assert.equal(guard('GET', ':99999').refusal, `${DENIED} a path that does not parse as a URL is refused`);
  assert.equal(guard('GET', '/api/v1/namespaces/a/secrets/%zz').refusal, undefined, 'one Secret named "%zz"');
  assert.equal(guard('GET', '/api/v1/namespaces/a/secrets%zz').refusal, undefined, 'not the secrets resource');
});

test('a path one reading names and another reads as the collection is a collection', () => {
  // Dot segments resolved, /api/v1/secrets/x%2F.. is the whole collection.
  assert.equal(guard('GET', '/api/v1/secrets/x%2F..').refusal, `${DENIED} a list of Secrets as objects is refused (${HINT})`);
  assert.match(guard('DELETE', '/api/v1/secrets/x%2F..').refusal!, /deleting a collection/);
  // Three readings see a watch path, one (dot segments resolved) the plain collection: a watch, which a list view cannot serve.
  const mixed = '/api/v1/watch/secrets/..%2F..%2Fsecrets';
  assert.equal(guard('GET', mixed, PARTIAL_LIST).refusal, `${DENIED} a watch of Secrets as objects is refused (${HINT})`);
});

test('list, watch or get: by the path, the watch parameter (any true value, any of them), and the name', () => {
  const ns = '/api/v1/namespaces/a/secrets';
  assert.equal(guard('GET', ns, PARTIAL_LIST).refusal, undefined, 'a list');
  for (const query of ['watch=0', 'watch=false', 'watch=FALSE', 'watch=False']) {
    assert.equal(guard('GET', `${ns}?${query}`, PARTIAL_LIST).refusal, undefined, query);
  }
  for (const query of ['watch=1', 'watch=true', 'watch=0&watch=1', 'watch=false&watch=yes']) {
    assert.equal(
      guard('GET', `${ns}?${query}`, PARTIAL_LIST).refusal,
      `${DENIED} a watch of Secrets as objects is refused (${HINT})`,
      query,
    );
  }
  assert.equal(guard('GET', ns).refusal, `${DENIED} a list of Secrets as objects is refused (${HINT})`);
  assert.equal(guard('GET', `${ns}/x?watch=1`).refusal, undefined, 'a named read is a get, whatever its query');
  assert.equal(guard('GET', '/api/v1/proxy/namespaces/a/secrets/x').refusal, undefined, 'a proxy path is no watch');
  assert.equal(guard('GET', '/api/v1/proxy/namespaces/a/secrets', PARTIAL_LIST).refusal, undefined);
});

test('the Accept of a read comes from the Accept headers only; a get asks for JSON when it asks for no metadata view', () => {
  const ns = '/api/v1/namespaces/a/secrets';
  const other = secretGuard(deny, {
    method: 'GET',
    path: ns,
    headers: [
      { name: 'X-Other', value: TABLE },
      { name: 'ACCEPT', value: 'application/json' },
    ],
    upgrade: false,
  });
  assert.equal(other.refusal, `${DENIED} a list of Secrets as objects is refused (${HINT})`);
  const get = guard('GET', `${ns}/x`);
  assert.equal(get.holdsBody, false);
  const headers: Record<string, string | string[]> = { accept: '*/*', 'accept-encoding': 'gzip' };
  get.rewriteHeaders(headers);
  assert.deepEqual(headers, { accept: 'application/json' });
});

test("the guard's answer: a read of one Secret as an object refused when it succeeds, a write's answer scrubbed", async () => {
  const ns = '/api/v1/namespaces/a/secrets';
  assert.deepEqual(guard('GET', `${ns}/x`).answer(clusterAnswer(200, SECRET)), {
    refusal: `${DENIED} reading a Secret as an object is refused (${HINT})`,
    code: 'refused',
  });
  const status = { kind: 'Status', code: 404 };
  assert.equal(await sent(guard('GET', `${ns}/x`).answer(clusterAnswer(404, status))), `${JSON.stringify(status)}\n`);
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    const { data: _, ...scrubbed } = SECRET;
    assert.equal(await sent(guard(method, `${ns}/x`).answer(clusterAnswer(200, SECRET))), `${JSON.stringify(scrubbed)}\n`, method);
  }
  const table = { kind: 'Table', rows: [] };
  assert.equal(await sent(guard('GET', ns, TABLE).answer(clusterAnswer(200, table))), `${JSON.stringify(table)}\n`);
  assert.equal(
    await sent(guard('GET', ns, TABLE).answer(clusterAnswer(200, SECRET))),
    'error: an answer of kind "Secret" where only metadata may come back',
  );
});

test('a JSON patch is recognised by any of its Content-Type headers, parameters and spaces aside', () => {
  const patch = (...types: string[]) =>
    secretGuard(deny, {
      method: 'PATCH',
      path: '/api/v1/namespaces/a/secrets/x',
      headers: types.map((value) => ({ name: 'content-type', value })),
      upgrade: false,
    });
  const broken = Buffer.from('[{');
  const refused = `${DENIED} a JSON patch of a Secret that is not valid JSON is refused`;
  assert.equal(patch('application/merge-patch+json', 'application/json-patch+json').checkBody(broken), refused);
  assert.equal(patch(' Application/JSON-Patch+JSON ; charset=utf-8').checkBody(broken), refused);
  assert.equal(patch('application/merge-patch+json').checkBody(broken), undefined);
  assert.equal(patch('application/merge-patch+json').checkBody(Buffer.from('{"data":{"k":"dg=="}}')), undefined);
});

test('metadataAccept: every view of each shape, includeObject values, parameters written any way', () => {
  const q = (text = '') => new URLSearchParams(text);
  const PARTIAL = 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io';
  assert.equal(metadataAccept([PARTIAL], 'get', q()), PARTIAL);
  assert.equal(metadataAccept([TABLE], 'get', q()), TABLE);
  assert.equal(metadataAccept([TABLE], 'watch', q()), TABLE);
  assert.equal(metadataAccept([PARTIAL_LIST], 'get', q()), '');
  for (const include of ['', 'None', 'Metadata'])
    assert.equal(metadataAccept([TABLE], 'list', q(`includeObject=${include}`)), TABLE, include);
  assert.equal(metadataAccept([`${TABLE},${PARTIAL_LIST}`], 'list', q('includeObject=Object')), PARTIAL_LIST, 'only Tables depend on it');
  // Empty and value-less parameters are no parameter; a repeated one, even value-less, makes the alternative unusable.
  assert.equal(metadataAccept(['application/json;as=Table;;v=v1;;g=meta.k8s.io;=x'], 'get', q()), TABLE);
  assert.equal(metadataAccept(['application/json;as=Table;v=v1;g=meta.k8s.io;x;x'], 'get', q()), '');
  assert.equal(metadataAccept(['application/json;as=Table;v=v1;g=meta.k8s.io;=x;=x'], 'get', q()), TABLE);
  assert.equal(metadataAccept(['application/json;as=Secret;as=Table;v=v1;g=meta.k8s.io'], 'get', q()), '');
  assert.equal(metadataAccept(['application/json;as;v=v1;g=meta.k8s.io'], 'get', q()), '');
  assert.equal(metadataAccept(['application/json;as=Table;g=meta.k8s.io'], 'get', q()), '', 'no version');
  // The same alternative written twice is sent once.
  assert.equal(metadataAccept([`${TABLE},application/json; g=meta.k8s.io; v=v1; as=Table`, TABLE], 'list', q()), TABLE);
});
