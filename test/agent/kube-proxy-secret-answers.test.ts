/**
 * The agent checks the cluster's answers about Secrets under `kubeProxy.secrets: deny`, whatever the request asked
 * for: an API server that cannot produce the representation asked for may answer with the whole object (kube-apiserver
 * does in a watch). A real HTTP server on a real socket plays such a server here, answering exactly what each test
 * sets, and records what the agent sent it: the metadata-only Accept alternatives the caller listed, no compression.
 * An answer that is not JSON, compressed, of a kind that may carry values, or too large never goes back: refused when
 * no head went back yet, cut otherwise.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { SECRET_BUFFER_BYTES } from '../../src/agent/kube-proxy/secret-answer.js';
import { answerOf, drive, proxyAccount, proxyFor } from './kube-proxy-driver.js';

const MARKER = Buffer.from('outpost-secret-marker-answers').toString('base64');
const SECRET = { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'db', namespace: 'vault' }, data: { password: MARKER } };
const KUBECTL_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

/** What the server answers next, and the requests it saw. */
let answer: (res: http.ServerResponse) => void = (res) => res.end();
const seen: http.IncomingHttpHeaders[] = [];
let server: http.Server;
let kubeConfig: KubeConfig;

before(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    // client-node wants skipTLSVerify set to talk plain HTTP (the sandbox's kubeconfig does the same).
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'cluster-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const json =
  (status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) =>
  (res: http.ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

function setup() {
  return proxyFor([proxyAccount('sandbox', kubeConfig)]);
}

test('a metadata read goes out with only its metadata alternatives and no compression; a whole object coming back is cut', async () => {
  const { proxy, out } = setup();
  answer = json(200, { kind: 'SecretList', apiVersion: 'v1', metadata: {}, items: [SECRET] });
  seen.length = 0;
  await drive(proxy, out, 1n, {
    path: '/api/v1/namespaces/vault/secrets',
    headers: [
      ['accept', KUBECTL_ACCEPT],
      ['accept-encoding', 'gzip'],
    ],
  });
  const cut = await answerOf(out, 1n);
  assert.equal(seen[0]!.accept, 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io');
  assert.equal(seen[0]!['accept-encoding'], undefined);
  assert.equal(cut.status, 200, 'the head went back before the body was seen');
  assert.equal(cut.body, '');
  assert.match(cut.error, /where only metadata may come back/);
});

test('a watch is cut at the first event that carries an object', async () => {
  const { proxy, out } = setup();
  const table = { kind: 'Table', apiVersion: 'meta.k8s.io/v1', columnDefinitions: [], rows: [{ cells: ['db'], object: null }] };
  answer = (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(`${JSON.stringify({ type: 'ADDED', object: table })}\n`);
    res.end(`${JSON.stringify({ type: 'MODIFIED', object: SECRET })}\n`);
  };
  await drive(proxy, out, 1n, { path: '/api/v1/namespaces/vault/secrets?watch=1', headers: [['accept', KUBECTL_ACCEPT]] });
  const cut = await answerOf(out, 1n);
  assert.equal(JSON.parse(cut.body.split('\n')[0]!).object.kind, 'Table', 'the first event went back');
  assert.ok(!cut.body.includes(MARKER));
  assert.match(cut.error, /where only metadata may come back/);
});

test('answers the agent cannot check are refused before anything goes back', async () => {
  const { proxy, out } = setup();
  const cases: Array<[(res: http.ServerResponse) => void, RegExp]> = [
    [
      (res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(MARKER);
      },
      /with "text\/plain", which the agent cannot check/,
    ],
    [json(200, { kind: 'Table', rows: [] }, { 'content-encoding': 'gzip' }), /content-encoding "gzip"/],
  ];
  for (const [i, [respond, message]] of cases.entries()) {
    answer = respond;
    const id = BigInt(i + 1);
    await drive(proxy, out, id, { path: '/api/v1/namespaces/vault/secrets', headers: [['accept', KUBECTL_ACCEPT]] });
    const refused = await answerOf(out, id);
    assert.equal(refused.status, 0);
    assert.equal(refused.code, 'internal');
    assert.match(refused.error, message);
  }
});

test('a value larger than the bound is cut', async () => {
  const { proxy, out } = setup();
  const rows = [{ cells: ['x'.repeat(SECRET_BUFFER_BYTES)], object: null }];
  answer = json(200, { kind: 'Table', apiVersion: 'meta.k8s.io/v1', rows });
  await drive(proxy, out, 1n, { path: '/api/v1/namespaces/vault/secrets', headers: [['accept', KUBECTL_ACCEPT]] });
  const cut = await answerOf(out, 1n);
  assert.equal(cut.body, '');
  assert.match(cut.error, new RegExp(`larger than ${SECRET_BUFFER_BYTES} bytes`));
});

test('a write goes out asking for plain JSON; an answer of another kind is cut, a Status passes', async () => {
  const { proxy, out } = setup();
  seen.length = 0;
  answer = json(201, { kind: 'Table', apiVersion: 'meta.k8s.io/v1', rows: [{ cells: [MARKER], object: SECRET }] });
  await drive(proxy, out, 1n, {
    method: 'POST',
    path: '/api/v1/namespaces/vault/secrets',
    headers: [
      ['content-type', 'application/json'],
      ['accept', KUBECTL_ACCEPT],
    ],
    body: JSON.stringify(SECRET),
  });
  const cut = await answerOf(out, 1n);
  assert.equal(seen[0]!.accept, 'application/json');
  assert.ok(!cut.body.includes(MARKER));
  assert.match(cut.error, /an answer of kind "Table" to a write of a Secret/);

  const status = {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    reason: 'AlreadyExists',
    code: 409,
    message: 'secrets "db" already exists',
  };
  answer = json(409, status);
  await drive(proxy, out, 2n, {
    method: 'POST',
    path: '/api/v1/namespaces/vault/secrets',
    headers: [['content-type', 'application/json']],
    body: JSON.stringify(SECRET),
  });
  const conflict = await answerOf(out, 2n);
  assert.equal(conflict.status, 409);
  assert.equal(conflict.error, '');
  assert.deepEqual(JSON.parse(conflict.body), status);
});
