/**
 * `git/repo` artifacts over a real network transport: `git http-backend` (git's own smart-HTTP server, a CGI program)
 * behind a small Node HTTP server on 127.0.0.1, port 0, that checks a bearer token and spawns it per request. Why not
 * `git daemon`: it cannot listen on port 0 and say which port it got; why not `file://`: the gateway refuses every
 * transport but http(s), which is what production uses and what the target check guards.
 *
 * Checked: the answer is a tar.gz of the branch (`master` when blank) with paths relative to the repository root;
 * `location` or `metadata.subPath` narrows it to a sub-directory; an unknown branch is a 404; a wrong token a 502
 * whose message carries no token; a loopback repository is refused to an account that does not allow it; and every
 * temporary directory is gone afterwards.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ArtifactGateway, springError, startArtifactGateway, startTestServer, type TestServer } from './artifact-gateway.js';
import { makeRepository, tarEntries as entries } from './git-fixture.js';

const TOKEN = 'git-t0ken-value-0123456789';

/** Serves `root` with git http-backend as CGI, for requests carrying the token. */
function gitHttpServer(root: string): Promise<TestServer> {
  return startTestServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { 'www-authenticate': 'Bearer' });
      return void res.end();
    }
    const [path, query = ''] = (req.url ?? '/').split('?') as [string, string?];
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: req.method,
        PATH_INFO: decodeURIComponent(path),
        QUERY_STRING: query,
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        HTTP_GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_ADDR: '127.0.0.1',
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const [name, ...rest] = line.split(':');
        const value = rest.join(':').trim();
        if (name!.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else res.setHeader(name!, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on('end', () => res.end());
  });
}

describe('artifacts: git/repo', () => {
  let gw: ArtifactGateway;
  let server: TestServer;
  /** The gateway's temporary git directories present before the fetches (mkdtemp: the prefix and six characters). */
  let earlier: Set<string>;
  const gitTempDirs = () => readdirSync(cloneDir!).filter((name) => /^outpost-git-[A-Za-z0-9]{6}$/.test(name));
  let cloneDir: string | undefined;
  /** cloneDir's mtime before the fetches: a clone made and removed there moves it. */
  let cloneDirChanged = 0;
  before(async () => {
    // The clones go to a directory of this suite's own (gitRepo.cloneDir), so the check that none is left behind
    // never sees another test's clones.
    cloneDir = mkdtempSync(join(tmpdir(), 'outpost-git-clones-'));
    const root = mkdtempSync(join(tmpdir(), 'outpost-git-root-'));
    makeRepository(root);
    server = await gitHttpServer(root);
    const secrets = mkdtempSync(join(tmpdir(), 'outpost-git-secrets-'));
    writeFileSync(join(secrets, 'token'), TOKEN);
    writeFileSync(join(secrets, 'wrong'), 'wrong-token-value-42');
    gw = await startArtifactGateway({
      gitRepo: {
        cloneDir,
        accounts: [
          { name: 'git', tokenFile: join(secrets, 'token'), allowedPrivateNetworks: ['127.0.0.1/32'] },
          { name: 'git-wrong', tokenFile: join(secrets, 'wrong'), allowedPrivateNetworks: ['127.0.0.1/32'] },
          { name: 'git-public', tokenFile: join(secrets, 'token') },
        ],
      },
    });
    earlier = new Set(gitTempDirs());
    cloneDirChanged = statSync(cloneDir).mtimeMs;
  });
  after(async () => {
    await gw?.close();
    await server?.close();
    if (cloneDir) rmSync(cloneDir, { recursive: true, force: true });
  });

  const repo = (account: string, extra: Record<string, unknown> = {}) =>
    gw.fetchArtifact({ type: 'git/repo', reference: `${server.url}/app.git`, artifactAccount: account, ...extra });

  test('the whole tree of master (the default branch name) as a tar.gz', async () => {
    const res = await repo('git');
    assert.equal(res.status, 200, res.body.toString());
    assert.equal(res.type, 'application/octet-stream');
    assert.deepEqual(entries(res.body), ['README.md', 'charts/hello/Chart.yaml', 'kustomize/kustomization.yaml']);
  });

  test('a branch, and a sub-directory from location or metadata.subPath', async () => {
    const release = await repo('git', { version: 'release', location: 'charts' });
    assert.equal(release.status, 200, release.body.toString());
    assert.deepEqual(entries(release.body), ['charts/hello/Chart.yaml', 'charts/hello/values.yaml']);
    const sub = await repo('git', { metadata: { subPath: 'kustomize/' } });
    assert.deepEqual(entries(sub.body), ['kustomize/kustomization.yaml']);
    const missing = await repo('git', { location: 'no/such/dir' });
    assert.equal(missing.status, 404);
    const outside = await repo('git', { location: '../../etc' });
    assert.equal(outside.status, 400);
  });

  test('an unknown branch is a 404; a wrong token a 502 without the token in it', async () => {
    const branch = await repo('git', { version: 'no-such-branch' });
    assert.equal(branch.status, 404);
    assert.match(springError(branch.body).message, /no branch or tag no-such-branch/);
    const wrong = await repo('git-wrong');
    assert.equal(wrong.status, 502);
    const message = springError(wrong.body).message;
    assert.match(message, /cloning http:\/\/127\.0\.0\.1:\d+\/app\.git at master failed/);
    assert.ok(!message.includes('wrong-token-value-42') && !message.includes(TOKEN), message);
    assert.ok(!gw.logs().includes('wrong-token-value-42') && !gw.logs().includes(TOKEN));
  });

  test('a loopback repository is refused to an account that does not allow it; only http(s) is cloned', async () => {
    const before = server.requests.length;
    const res = await repo('git-public');
    assert.equal(res.status, 400);
    assert.match(springError(res.body).message, /loopback, link-local, private or reserved/);
    assert.equal(server.requests.length, before);
    const local = await gw.fetchArtifact({ type: 'git/repo', reference: 'file:///etc', artifactAccount: 'git' });
    assert.equal(local.status, 400);
  });

  test('no temporary directory is left behind', () => {
    assert.ok(statSync(cloneDir!).mtimeMs > cloneDirChanged, 'the clones were made in gitRepo.cloneDir');
    assert.deepEqual(
      gitTempDirs().filter((name) => !earlier.has(name)),
      [],
    );
  });
});
