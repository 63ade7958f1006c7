/**
 * `PUT /artifacts/fetch` with the built-in accounts, and `GET /artifacts/credentials`, against a gateway on a real
 * port: the contract's §5.3 artifact lines (an embedded/base64 round trip on both paths, 400 naming the missing account for a
 * missing account, 404 for an unknown one, the credentials listing), Clouddriver's answers for bad base64,
 * `remote/base64` and the binding-only accounts, unknown keys ignored, the body bounded, and the `spinnaker` role
 * required (a `read` token is refused).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ArtifactGateway, READER_TOKEN, springError, startArtifactGateway } from './artifact-gateway.js';

describe('artifacts: embedded and built-in accounts', () => {
  let gw: ArtifactGateway;
  before(async () => {
    gw = await startArtifactGateway({ maxRequestBytes: 4096 });
  });
  after(async () => {
    await gw?.close();
  });

  const manifests = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: ConfigMap\n';
  const reference = Buffer.from(manifests).toString('base64');

  test('an embedded/base64 artifact comes back as its decoded bytes, on both paths, unknown keys ignored', async () => {
    const artifact = { type: 'embedded/base64', reference, artifactAccount: 'embedded-artifact', customKind: false, metadata: {} };
    for (const path of ['/artifacts/fetch/', '/artifacts/fetch']) {
      const res = await gw.fetchArtifact({ ...artifact, kind: 'stray', somethingNew: { nested: [1] }, provenance: 'x' }, { path });
      assert.equal(res.status, 200, path);
      assert.equal(res.type, 'application/octet-stream');
      assert.equal(res.body.toString('utf8'), manifests);
    }
    const urlSafe = Buffer.from([0xfb, 0xff, 0xfe]).toString('base64url');
    const res = await gw.fetchArtifact({ type: 'embedded/base64', reference: urlSafe, artifactAccount: 'embedded-artifact' });
    assert.deepEqual([...res.body], [0xfb, 0xff, 0xfe], 'the URL-safe alphabet is accepted too');
  });

  test('no artifactAccount is a 400 saying so (Spring shape); an unknown account or a type it does not handle a 404', async () => {
    const missing = await gw.fetchArtifact({ name: 'foo' }, { path: '/artifacts/fetch' });
    assert.equal(missing.status, 400);
    const error = JSON.parse(missing.body.toString('utf8'));
    assert.equal(error.status, 400);
    assert.match(error.message, /names no artifactAccount/);
    const unknown = await gw.fetchArtifact(
      { type: 'embedded/base64', reference: 'eA==', artifactAccount: 'nope' },
      { path: '/artifacts/fetch' },
    );
    assert.equal(unknown.status, 404);
    assert.deepEqual(
      { ...springError(unknown.body), timestamp: undefined },
      {
        timestamp: undefined,
        status: 404,
        error: 'Not Found',
        message: "Artifact credentials 'nope' cannot handle artifacts of type 'embedded/base64'",
        path: '/artifacts/fetch',
      },
    );
    const wrongType = await gw.fetchArtifact({
      type: 'http/file',
      reference: 'https://example.com/',
      artifactAccount: 'embedded-artifact',
    });
    assert.equal(wrongType.status, 404);
  });

  test('bad base64 and remote/base64 are 400s; custom/object and kubernetes/* fail as Clouddriver fails them', async () => {
    const bad = await gw.fetchArtifact({ type: 'embedded/base64', reference: 'not base64!', artifactAccount: 'embedded-artifact' });
    assert.equal(bad.status, 400);
    assert.match(springError(bad.body).message, /not valid base64/);
    const remote = await gw.fetchArtifact({ type: 'remote/base64', reference: 'ref://app/abc', artifactAccount: 'embedded-artifact' });
    assert.equal(remote.status, 400);
    assert.match(springError(remote.body).message, /artifact store/);
    const custom = await gw.fetchArtifact({ type: 'custom/object', reference: 'x', artifactAccount: 'custom-artifact' });
    assert.equal(custom.status, 500);
    assert.equal(springError(custom.body).message, 'Custom references are passed on to cloud platforms to handle or process');
    const kube = await gw.fetchArtifact({ type: 'kubernetes/configMap', reference: 'x', artifactAccount: 'kubernetes' });
    assert.equal(kube.status, 500);
  });

  test('the body is a JSON artifact object of bounded size', async () => {
    assert.equal((await gw.fetchArtifact('[1,2]')).status, 400);
    assert.equal((await gw.fetchArtifact('{"type": 1, "artifactAccount": {"a": 1}}')).status, 400);
    const big = await gw.fetchArtifact({ type: 'embedded/base64', reference: 'A'.repeat(8192), artifactAccount: 'embedded-artifact' });
    assert.equal(big.status, 413);
  });

  test('GET /artifacts/credentials lists the built-in accounts as Clouddriver does', async () => {
    const res = await gw.get('/artifacts/credentials');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, [
      { name: 'embedded-artifact', types: ['embedded/base64', 'remote/base64'], type: 'artifacts-embedded' },
      { name: 'custom-artifact', types: ['custom/object'], type: 'artifacts-custom' },
      {
        name: 'kubernetes',
        types: ['kubernetes/configMap', 'kubernetes/deployment', 'kubernetes/replicaSet', 'kubernetes/secret'],
        type: 'artifacts-kubernetes',
      },
    ]);
  });

  test('names and versions: 404 for an unknown account, 501 for an account that is not Helm, 400 without type', async () => {
    assert.equal((await gw.get('/artifacts/account/nope/names?type=helm/chart')).status, 404);
    const embedded = await gw.get('/artifacts/account/embedded-artifact/names?type=embedded/base64');
    assert.equal(embedded.status, 501);
    assert.equal(embedded.body.error, 'Not Implemented');
    assert.equal((await gw.get('/artifacts/account/embedded-artifact/versions?type=embedded/base64&artifactName=x')).status, 501);
    assert.equal((await gw.get('/artifacts/account/embedded-artifact/names')).status, 400);
  });

  test('the routes need the spinnaker role: a read token is refused, no token is unauthenticated', async () => {
    const artifact = { type: 'embedded/base64', reference, artifactAccount: 'embedded-artifact' };
    assert.equal((await gw.fetchArtifact(artifact, { token: READER_TOKEN })).status, 403);
    assert.equal((await gw.get('/artifacts/credentials', READER_TOKEN)).status, 403);
    const anonymous = await fetch(`${gw.baseUrl}/artifacts/credentials`);
    assert.equal(anonymous.status, 401);
  });
});
