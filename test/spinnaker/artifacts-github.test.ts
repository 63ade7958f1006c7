/**
 * `github/file` artifacts against a small server speaking GitHub's contents API on 127.0.0.1 (port 0), as GitHub
 * documents it: `GET /repos/{owner}/{repo}/contents/{path}?ref=…` answers the raw file for
 * `Accept: application/vnd.github.v3.raw`, JSON metadata otherwise (with `download_url`: on the same origin for repo
 * `acme/app`, as GitHub Enterprise's `/raw/…`; on a second server with a `?token=` for `acme/private`, as github.com's
 * `raw.githubusercontent.com`), 404 `{"message": "Not Found"}` for an unknown file or ref, 401 `{"message": "Bad
 * credentials"}` without the right `Authorization: token …`. Checked: both of Clouddriver's modes (`useContentAPI`),
 * the ref (`master` when blank), the raw media type, the token (never sent to another origin), a file larger than
 * the in-memory part of the spool, a metadata answer without `download_url`, and that no token appears in an answer
 * or a log line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ArtifactGateway, springError, startArtifactGateway, startTestServer, type TestServer } from './artifact-gateway.js';

const TOKEN = 'ghp_0123456789abcdefTOKENvalue';
const FILES: Record<string, Record<string, string>> = {
  master: { 'deploy/app.yaml': 'kind: Deployment # master\n' },
  v2: { 'deploy/app.yaml': 'kind: Deployment # v2\n', 'big.txt': 'line of a large file\n'.repeat(150_000) },
};

const RAW_TOKEN = 'GHSAT0AAAAshortlivedrawtoken';

describe('artifacts: github/file', () => {
  let gw: ArtifactGateway;
  let github: TestServer;
  /** github.com's raw.githubusercontent.com: the file by its path, with the short-lived token in the query. */
  let raw: TestServer;
  before(async () => {
    raw = await startTestServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const m = /^\/acme\/private\/([^/]+)\/(.+)$/.exec(url.pathname);
      const content = m && url.searchParams.get('token') === RAW_TOKEN ? FILES[m[1]!]?.[m[2]!] : undefined;
      res.writeHead(content === undefined ? 404 : 200, { 'content-type': 'text/plain' });
      res.end(content ?? '404: Not Found');
    });
    github = await startTestServer((req, res) => {
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `token ${TOKEN}`)
        return json(401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
      const url = new URL(req.url ?? '/', 'http://x');
      const rawPath = /^\/raw\/acme\/app\/([^/]+)\/(.+)$/.exec(url.pathname);
      if (rawPath) {
        const content = FILES[rawPath[1]!]?.[rawPath[2]!];
        res.writeHead(content === undefined ? 404 : 200, { 'content-type': 'text/plain' });
        return void res.end(content ?? 'not found');
      }
      const m = /^\/repos\/acme\/(app|private|dir)\/contents\/(.+)$/.exec(url.pathname);
      const ref = url.searchParams.get('ref') ?? 'main';
      if (m?.[1] === 'dir') return json(200, [{ type: 'file', name: 'a.yaml', path: 'deploy/a.yaml', download_url: null }]);
      const content = m ? FILES[ref]?.[m[2]!] : undefined;
      if (content === undefined) return json(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
      if (req.headers.accept === 'application/vnd.github.v3.raw') {
        res.writeHead(200, { 'content-type': 'application/vnd.github.v3.raw' });
        return void res.end(content);
      }
      const download_url =
        m![1] === 'app' ? `${github.url}/raw/acme/app/${ref}/${m![2]}` : `${raw.url}/acme/private/${ref}/${m![2]}?token=${RAW_TOKEN}`;
      json(200, { type: 'file', encoding: 'base64', content: Buffer.from(content).toString('base64'), path: m![2], download_url });
    });
    const dir = mkdtempSync(join(tmpdir(), 'outpost-artifacts-github-'));
    writeFileSync(join(dir, 'token'), `${TOKEN}\n`);
    writeFileSync(join(dir, 'stale'), 'ghp_stale_token_value_999');
    gw = await startArtifactGateway({
      github: {
        accounts: [
          { name: 'github', tokenFile: join(dir, 'token'), useContentAPI: true, allowedPrivateNetworks: ['127.0.0.1/32'] },
          { name: 'github-stale', tokenFile: join(dir, 'stale'), useContentAPI: true, allowedPrivateNetworks: ['127.0.0.1/32'] },
          { name: 'github-meta', tokenFile: join(dir, 'token'), allowedPrivateNetworks: ['127.0.0.1/32'] },
        ],
      },
    });
  });
  after(async () => {
    await gw?.close();
    await github?.close();
    await raw?.close();
  });

  const file = (account: string, version?: string, path = 'deploy/app.yaml', repo = 'app') =>
    gw.fetchArtifact({
      type: 'github/file',
      name: path,
      version,
      reference: `${github.url}/repos/acme/${repo}/contents/${path}`,
      artifactAccount: account,
    });

  test("Clouddriver's default mode: the JSON metadata, then its download_url with the token on the API origin only", async () => {
    const before = github.requests.length;
    const enterprise = await file('github-meta', 'v2');
    assert.equal(enterprise.status, 200, enterprise.body.toString());
    assert.equal(enterprise.body.toString(), FILES.v2!['deploy/app.yaml']);
    const [metadata, download] = github.requests.slice(before);
    assert.equal(metadata!.url, '/repos/acme/app/contents/deploy/app.yaml?ref=v2');
    assert.notEqual(metadata!.headers.accept, 'application/vnd.github.v3.raw');
    assert.equal(download!.url, '/raw/acme/app/v2/deploy/app.yaml');
    assert.equal(download!.headers.authorization, `token ${TOKEN}`, 'the same origin (GitHub Enterprise): the token goes');
    const dotcom = await file('github-meta', undefined, 'deploy/app.yaml', 'private');
    assert.equal(dotcom.status, 200, dotcom.body.toString());
    assert.equal(dotcom.body.toString(), FILES.master!['deploy/app.yaml']);
    const seen = raw.requests.at(-1)!;
    assert.equal(seen.url, `/acme/private/master/deploy/app.yaml?token=${RAW_TOKEN}`);
    assert.equal(seen.headers.authorization, undefined, 'another origin never gets the account token');
  });

  test('metadata without a download_url (a directory) is a 502 naming it; no token in the message', async () => {
    const dir = await file('github-meta', 'master', 'deploy', 'dir');
    assert.equal(dir.status, 502);
    const message = springError(dir.body).message;
    assert.match(message, /download URL/);
    assert.ok(!message.includes(TOKEN));
    const missing = await file('github-meta', 'master', 'nope.yaml');
    assert.equal(missing.status, 502);
    assert.match(springError(missing.body).message, /answered 404/);
  });

  test('the raw file at the ref, master when blank, with the token and the raw media type', async () => {
    const master = await file('github');
    assert.equal(master.status, 200);
    assert.equal(master.body.toString(), FILES.master!['deploy/app.yaml']);
    const seen = github.requests.at(-1)!;
    assert.equal(seen.url, '/repos/acme/app/contents/deploy/app.yaml?ref=master');
    assert.equal(seen.headers.accept, 'application/vnd.github.v3.raw');
    assert.equal(seen.headers.authorization, `token ${TOKEN}`);
    const v2 = await file('github', 'v2');
    assert.equal(v2.body.toString(), FILES.v2!['deploy/app.yaml']);
  });

  test('a file of several MiB (held in a temporary file, not in memory) comes back whole', async () => {
    const big = await file('github', 'v2', 'big.txt');
    assert.equal(big.status, 200);
    assert.equal(big.body.length, FILES.v2!['big.txt']!.length);
    assert.ok(big.body.equals(Buffer.from(FILES.v2!['big.txt']!)));
  });

  test("GitHub's 404 and 401 are 502s naming the status, without the token", async () => {
    const missing = await file('github', 'master', 'nope.yaml');
    assert.equal(missing.status, 502);
    assert.match(springError(missing.body).message, /answered 404/);
    const stale = await file('github-stale');
    assert.equal(stale.status, 502);
    const message = springError(stale.body).message;
    assert.match(message, /answered 401/);
    for (const secret of [TOKEN, 'ghp_stale_token_value_999']) {
      assert.ok(!message.includes(secret));
      assert.ok(!gw.logs().includes(secret), 'no token in the logs');
    }
    const listing = await gw.get('/artifacts/credentials');
    assert.ok(!JSON.stringify(listing.body).includes('ghp_'));
    assert.deepEqual(
      listing.body.find((a: { name: string }) => a.name === 'github'),
      { name: 'github', types: ['github/file'], type: 'artifacts-github' },
    );
  });
});
