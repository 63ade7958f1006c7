/**
 * `helm/chart`, `helm/index` and the names/versions routes against a Helm repository served over HTTP from a
 * directory on 127.0.0.1 (port 0): the test writes `index.yaml` and packages the charts as .tgz with the system `tar`
 * (no helm binary). Relative chart URLs resolve against the repository URL, absolute ones are used as they are; a
 * blank version is the latest by version order (1.10.0 over 1.9.0 and over 1.10.0-rc.1, where text order would pick
 * 1.9.0); an unknown chart or version is a 404.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ArtifactGateway, springError, startArtifactGateway, startTestServer, type TestServer } from './artifact-gateway.js';

/** Packages a chart directory `<name>/Chart.yaml` as `<dir>/<file>` with the system tar; returns its bytes. */
function packageChart(root: string, name: string, version: string, file: string): Buffer {
  const work = mkdtempSync(join(tmpdir(), 'outpost-chart-'));
  mkdirSync(join(work, name));
  writeFileSync(join(work, name, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: ${version}\n`);
  writeFileSync(join(work, name, 'values.yaml'), `image: nginx:${version}\n`);
  mkdirSync(join(root, file, '..'), { recursive: true });
  execFileSync('tar', ['-czf', join(root, file), '-C', work, name]);
  return readFileSync(join(root, file));
}

describe('artifacts: Helm repositories', () => {
  let gw: ArtifactGateway;
  let server: TestServer;
  const charts = new Map<string, Buffer>();
  let index = '';
  before(async () => {
    const root = mkdtempSync(join(tmpdir(), 'outpost-helm-repo-'));
    server = await startTestServer((req, res) => {
      const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0]!));
      try {
        res.end(readFileSync(join(root, path)));
      } catch {
        res.writeHead(404);
        res.end();
      }
    });
    const repo = `${server.url}/repo`;
    charts.set('0.2.0', packageChart(join(root, 'repo'), 'hello', '0.2.0', 'hello-0.2.0.tgz'));
    charts.set('1.9.0', packageChart(join(root, 'repo'), 'hello', '1.9.0', 'charts/hello-1.9.0.tgz'));
    charts.set('1.10.0-rc.1', packageChart(join(root, 'repo'), 'hello', '1.10.0-rc.1', 'hello-1.10.0-rc.1.tgz'));
    charts.set('1.10.0', packageChart(join(root, 'elsewhere'), 'hello', '1.10.0', 'hello-1.10.0.tgz'));
    packageChart(join(root, 'repo'), 'world', '2.0.0', 'world-2.0.0.tgz');
    index = [
      'apiVersion: v1',
      'entries:',
      '  hello:',
      '  - {name: hello, version: 1.9.0, urls: [charts/hello-1.9.0.tgz]}',
      `  - {name: hello, version: 1.10.0, urls: ['${server.url}/elsewhere/hello-1.10.0.tgz']}`,
      '  - {name: hello, version: 0.2.0, urls: [hello-0.2.0.tgz]}',
      '  - {name: hello, version: 1.10.0-rc.1, urls: [hello-1.10.0-rc.1.tgz]}',
      '  world:',
      '  - {name: world, version: 2.0.0, urls: [world-2.0.0.tgz]}',
      'generated: "2025-01-01T00:00:00Z"',
      '',
    ].join('\n');
    writeFileSync(join(root, 'repo', 'index.yaml'), index);
    gw = await startArtifactGateway({
      helm: {
        accounts: [
          { name: 'charts', repository: `${repo}/`, allowedPrivateNetworks: ['127.0.0.0/8'] },
          { name: 'broken', repository: `${server.url}/nothing-here`, allowedPrivateNetworks: ['127.0.0.0/8'] },
        ],
      },
    });
  });
  after(async () => {
    await gw?.close();
    await server?.close();
  });

  const chart = (name: string, version?: string) =>
    gw.fetchArtifact({ type: 'helm/chart', name, version, artifactAccount: 'charts', reference: name });

  test('a chart at a version: relative URLs against the repository, absolute ones as they are', async () => {
    for (const version of ['0.2.0', '1.9.0', '1.10.0']) {
      const res = await chart('hello', version);
      assert.equal(res.status, 200, version);
      assert.equal(res.type, 'application/octet-stream');
      assert.ok(res.body.equals(charts.get(version)!), `the .tgz of ${version}, byte for byte`);
    }
    assert.ok(server.requests.some((r) => r.url === '/repo/charts/hello-1.9.0.tgz'));
    assert.ok(server.requests.some((r) => r.url === '/elsewhere/hello-1.10.0.tgz'));
  });

  test('a blank version is the latest by version order, not text order, and a release beats its pre-release', async () => {
    for (const version of [undefined, '', '  ']) {
      const res = await chart('hello', version);
      assert.equal(res.status, 200);
      assert.ok(res.body.equals(charts.get('1.10.0')!), `version ${JSON.stringify(version)} is 1.10.0`);
    }
  });

  test('helm/index answers index.yaml itself', async () => {
    const res = await gw.fetchArtifact({ type: 'helm/index', artifactAccount: 'charts', name: 'index' });
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), index);
  });

  test('an unknown chart or version is a 404; a repository without an index a 502', async () => {
    const unknown = await chart('nope', '1.0.0');
    assert.equal(unknown.status, 404);
    assert.equal(springError(unknown.body).message, 'Could not find correct entry with artifact name nope');
    const version = await chart('hello', '9.9.9');
    assert.equal(version.status, 404);
    assert.equal(springError(version.body).message, 'Could not find correct entry with artifact version 9.9.9');
    const broken = await gw.fetchArtifact({ type: 'helm/chart', name: 'hello', artifactAccount: 'broken' });
    assert.equal(broken.status, 502);
    assert.match(springError(broken.body).message, /nothing-here\/index\.yaml answered 404/);
  });

  test('names and versions list the index for Deck', async () => {
    const names = await gw.get('/artifacts/account/charts/names?type=helm/chart');
    assert.equal(names.status, 200);
    assert.deepEqual(names.body, ['hello', 'world']);
    const versions = await gw.get('/artifacts/account/charts/versions?type=helm/chart&artifactName=hello');
    assert.deepEqual(versions.body, ['1.9.0', '1.10.0', '0.2.0', '1.10.0-rc.1']);
    assert.equal((await gw.get('/artifacts/account/charts/versions?type=helm/chart&artifactName=nope')).status, 404);
    assert.equal((await gw.get('/artifacts/account/charts/versions?type=helm/chart')).status, 400);
    assert.equal((await gw.get('/artifacts/account/charts/names?type=http/file')).status, 404);
    const listing = await gw.get('/artifacts/credentials');
    assert.deepEqual(
      listing.body.find((a: { name: string }) => a.name === 'charts'),
      { name: 'charts', types: ['helm/chart', 'helm/index'], type: 'artifacts-helm' },
    );
  });
});
