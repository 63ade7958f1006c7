/**
 * A Kubernetes pipeline from artifacts, end to end, as Spinnaker's services call Outpost (the Deck contract's §4.7):
 * Bake (Manifest) — Rosco fetches the Helm chart through `PUT /artifacts/fetch/` (a `helm/chart` account over a
 * repository served on 127.0.0.1) and bakes it into an `embedded/base64` artifact — then Deploy (Manifest) with
 * `source: artifact` — Orca's ManifestEvaluator fetches that artifact through the same route, splits the YAML documents
 * and posts them as `deployManifest` — then Wait for stable, and Deck's server-group view shows the new version with
 * healthy instances. Also a deploy from an `http/file` artifact behind Basic authentication. Rosco's own templating is
 * not Outpost's: the chart's template here is plain YAML, so the bake is its extraction.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { startStack, type Stack } from '../../testkit/stack.js';
import { tokenGateway } from '../../testkit/token-gateway.js';
import { createOrcaClient, type Obj, type OrcaClient } from './orca-client.js';

const TOKENS = { agent: 'pipeline-agent-token-0123456789abcdef', orca: 'pipeline-orca-token-0123456789abcdef' };
const FILE_USER = 'deployer';
const FILE_PASSWORD = 'artifact-password-0123456789';

const deploymentYaml = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: hello}
  template:
    metadata:
      labels: {app: hello}
    spec:
      containers:
      - name: web
        image: ${image}
`;

describe('a pipeline from artifacts: bake from a Helm chart, deploy the embedded artifact, Deck shows it', { concurrency: false }, () => {
  let dir: string;
  let server: Server;
  let stack: Stack;
  let orca: OrcaClient;
  const fetchArtifact = async (artifact: Obj): Promise<Buffer> => {
    const res = await fetch(`${stack.gateway.httpUrl}/artifacts/fetch/`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKENS.orca}`, 'content-type': 'application/json' },
      body: JSON.stringify(artifact),
    });
    const body = Buffer.from(await res.arrayBuffer());
    assert.equal(res.status, 200, body.toString('utf8'));
    return body;
  };
  /** What Orca's ManifestEvaluator does with a fetched artifact: every YAML document that is not empty, as a map. */
  const manifestsOf = (bytes: Buffer) =>
    parseAllDocuments(bytes.toString('utf8'))
      .map((d) => d.toJS() as Obj | null)
      .filter((d): d is Obj => d !== null);
  const until = (path: string, ready: (body: Obj) => boolean) => orca.until(path, ready);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-pipeline-'));
    // The Helm repository: chart hello 1.0.0, its template plain YAML.
    const chart = join(dir, 'chart');
    mkdirSync(join(chart, 'hello', 'templates'), { recursive: true });
    writeFileSync(join(chart, 'hello', 'Chart.yaml'), 'apiVersion: v2\nname: hello\nversion: 1.0.0\n');
    writeFileSync(join(chart, 'hello', 'templates', 'deployment.yaml'), deploymentYaml('nginx:1.0'));
    mkdirSync(join(dir, 'repo'));
    execFileSync('tar', ['-czf', join(dir, 'repo', 'hello-1.0.0.tgz'), '-C', chart, 'hello']);
    writeFileSync(
      join(dir, 'repo', 'index.yaml'),
      'apiVersion: v1\nentries:\n  hello:\n  - {name: hello, version: 1.0.0, urls: [hello-1.0.0.tgz]}\n',
    );
    const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-http, namespace: default}\ndata: {source: http}\n';
    const basic = `Basic ${Buffer.from(`${FILE_USER}:${FILE_PASSWORD}`).toString('base64')}`;
    server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      if (path.startsWith('/files/')) {
        if (req.headers.authorization !== basic) return void res.writeHead(401).end();
        return void res.end(configMap);
      }
      try {
        res.end(readFileSync(join(dir, 'repo', path.replace(/^\/repo\//, ''))));
      } catch {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    writeFileSync(join(dir, 'password'), FILE_PASSWORD);
    const local = { allowedPrivateNetworks: ['127.0.0.0/8'] };
    stack = await startStack({
      gateway: {
        ...tokenGateway([
          { subject: 'agent', token: TOKENS.agent, roles: ['agent'], accounts: ['*'] },
          { subject: 'orca', token: TOKENS.orca, roles: ['spinnaker'], accounts: ['*'] },
        ]),
        spinnaker: {
          artifacts: {
            helm: { accounts: [{ name: 'charts', repository: `${url}/repo`, ...local }] },
            http: {
              accounts: [{ name: 'files', username: FILE_USER, passwordFile: join(dir, 'password'), ...local }],
            },
          },
        },
      },
      agents: [{ accounts: [{ name: 'k8s', namespaces: ['default'] }], config: { clouddriver: { auth: { token: TOKENS.agent } } } }],
    });
    orca = createOrcaClient(stack.gateway.httpUrl, { authorization: `Bearer ${TOKENS.orca}` });
  });
  after(async () => {
    await stack?.close();
    await new Promise((resolve) => server?.close(resolve));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('Bake (Manifest) from helm/chart → Deploy (Manifest) from embedded/base64 → stable → Deck shows the version', async () => {
    // Rosco: the chart (blank version: the latest), then its rendered templates as the baked artifact.
    const tgz = await fetchArtifact({ type: 'helm/chart', name: 'hello', version: '', artifactAccount: 'charts' });
    const rendered = execFileSync('tar', ['-xzOf', '-', 'hello/templates/deployment.yaml'], { input: tgz });
    const baked = { type: 'embedded/base64', name: 'hello', reference: rendered.toString('base64') };
    // Orca: the bound artifact's account comes from the expected artifact (Deck's base64 editor: embedded-artifact).
    const fetched = await fetchArtifact({ ...baked, artifactAccount: 'embedded-artifact', customKind: false, metadata: {} });
    assert.equal(fetched.toString('utf8'), deploymentYaml('nginx:1.0'));
    const manifests = manifestsOf(fetched);
    assert.equal(manifests.length, 1);
    const outcome = await orca.run(
      'deployManifest',
      {
        account: 'k8s',
        cloudProvider: 'kubernetes',
        source: 'artifact',
        manifestArtifactId: 'baked-hello',
        moniker: { app: 'hello' },
        skipExpressionEvaluation: true,
        manifests,
      },
      true,
    );
    assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
    const stable = await orca.waitStable('k8s', { default: ['deployment hello'] });
    assert.equal(stable.status, 'SUCCEEDED', stable.messages.join('\n'));
    // Deck's Clusters tab: the server group of the new version, with its pods up.
    const groups = await until('/applications/hello/serverGroups?expand=false', (body) =>
      (body as unknown as Obj[]).some((g) => g.buildInfo.images.includes('nginx:1.0') && g.instanceCounts.up === 2),
    );
    const group = (groups as unknown as Obj[]).find((g) => g.buildInfo.images.includes('nginx:1.0'))!;
    assert.equal(group.account, 'k8s');
    assert.equal(group.moniker.app, 'hello');
    assert.equal(group.moniker.cluster, 'deployment hello');
    assert.equal(group.instanceCounts.total, 2);
    assert.ok(group.instances.every((i: Obj) => i.healthState === 'Up'));
    assert.deepEqual(group.serverGroupManagers, [{ account: 'k8s', location: 'default', name: 'hello' }]);
  });

  test('Deploy (Manifest) from an http/file artifact behind Basic authentication', async () => {
    const fetched = await fetchArtifact({
      type: 'http/file',
      reference: `http://127.0.0.1:${(server.address() as AddressInfo).port}/files/configmap.yaml`,
      artifactAccount: 'files',
    });
    const outcome = await orca.run(
      'deployManifest',
      { account: 'k8s', cloudProvider: 'kubernetes', source: 'artifact', moniker: { app: 'files' }, manifests: manifestsOf(fetched) },
      true,
    );
    assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
    // ConfigMaps are versioned, as Spinnaker deploys them.
    const read = await orca.manifest('k8s', 'default', 'configMap from-http-v000');
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.manifest.data.source, 'http');
  });
});
