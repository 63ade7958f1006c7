/**
 * `git/repo` artifacts over SSH against a real OpenSSH server (./ssh-server.ts: sshd in inetd mode behind a port-0
 * listener on 127.0.0.1): an `ssh://` clone URL answered as the same tar.gz as over HTTP, its sub-directory, a key
 * with a passphrase (answered from a file, never a command line), the host key checked against the account's
 * known_hosts under the URL's host name (an unknown or changed key refused) unless the account trusts unknown hosts, a
 * key the server does not accept, an account without a key, a loopback server refused to an account that does not
 * allow it, and the scp-like form parsed and pinned to the checked address.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { artifactsSchema } from '../../src/gateway/config/artifacts-schema.js';
import { hostKeyAlias, parseSshRemote, pinnedSshUrl } from '../../src/gateway/spinnaker/artifacts/git-ssh.js';
import { type ArtifactGateway, springError, startArtifactGateway } from './artifact-gateway.js';
import { makeRepository, tarEntries } from './git-fixture.js';
import { makeKeyPair, startTestSshServer, type TestSshServer } from './ssh-server.js';

describe('artifacts: git/repo over SSH', () => {
  let gw: ArtifactGateway;
  let sshd: TestSshServer;
  let root: string;
  let clientKey: string;
  const gitTempDirs = () => readdirSync(cloneDir!).filter((name) => /^outpost-git-[A-Za-z0-9]{6}$/.test(name));
  let earlier: Set<string>;

  let cloneDir: string | undefined;
  /** cloneDir's mtime before the fetches: a clone made and removed there moves it. */
  let cloneDirChanged = 0;
  before(async () => {
    // The clones go to a directory of this suite's own (gitRepo.cloneDir), so the check that none is left behind
    // never sees another test's clones.
    cloneDir = mkdtempSync(join(tmpdir(), 'outpost-git-clones-'));
    root = mkdtempSync(join(tmpdir(), 'outpost-git-ssh-root-'));
    makeRepository(root);
    const keys = mkdtempSync(join(tmpdir(), 'outpost-git-ssh-keys-'));
    const accepted = makeKeyPair(join(keys, 'deploy'));
    const withPassphrase = makeKeyPair(join(keys, 'locked'), 'correct horse battery');
    makeKeyPair(join(keys, 'stranger'));
    clientKey = join(keys, 'deploy');
    writeFileSync(join(keys, 'passphrase'), 'correct horse battery\n');
    sshd = await startTestSshServer(mkdtempSync(join(tmpdir(), 'outpost-sshd-')), [accepted, withPassphrase]);
    writeFileSync(join(keys, 'known_hosts'), `[127.0.0.1]:${sshd.port} ${sshd.hostKey}\n`);
    const otherHost = makeKeyPair(join(keys, 'other-host'));
    writeFileSync(join(keys, 'wrong_known_hosts'), `[127.0.0.1]:${sshd.port} ${otherHost}\n`);
    const loopback = ['127.0.0.1/32'];
    const known = join(keys, 'known_hosts');
    gw = await startArtifactGateway({
      gitRepo: {
        cloneDir,
        accounts: [
          { name: 'git-ssh', sshPrivateKeyFile: clientKey, sshKnownHostsFile: known, allowedPrivateNetworks: loopback },
          {
            name: 'git-locked',
            sshPrivateKeyFile: join(keys, 'locked'),
            sshPrivateKeyPassphraseFile: join(keys, 'passphrase'),
            sshKnownHostsFile: known,
            allowedPrivateNetworks: loopback,
          },
          { name: 'git-trusting', sshPrivateKeyFile: clientKey, sshTrustUnknownHosts: true, allowedPrivateNetworks: loopback },
          {
            name: 'git-wrong-host',
            sshPrivateKeyFile: clientKey,
            sshKnownHostsFile: join(keys, 'wrong_known_hosts'),
            allowedPrivateNetworks: loopback,
          },
          { name: 'git-stranger', sshPrivateKeyFile: join(keys, 'stranger'), sshKnownHostsFile: known, allowedPrivateNetworks: loopback },
          { name: 'git-http-only', allowedPrivateNetworks: loopback },
          { name: 'git-public', sshPrivateKeyFile: clientKey, sshKnownHostsFile: known },
        ],
      },
    });
    earlier = new Set(gitTempDirs());
    cloneDirChanged = statSync(cloneDir).mtimeMs;
  });
  after(async () => {
    await gw?.close();
    await sshd?.close();
    if (cloneDir) rmSync(cloneDir, { recursive: true, force: true });
  });

  const reference = () => `ssh://${sshd.user}@127.0.0.1:${sshd.port}${join(root, 'app.git')}`;
  const repo = (account: string, extra: Record<string, unknown> = {}) =>
    gw.fetchArtifact({ type: 'git/repo', reference: reference(), artifactAccount: account, ...extra });

  test('an ssh:// clone URL: the tree of master as a tar.gz, a branch and a sub-directory', async () => {
    const res = await repo('git-ssh');
    assert.equal(res.status, 200, res.body.toString());
    assert.deepEqual(tarEntries(res.body), ['README.md', 'charts/hello/Chart.yaml', 'kustomize/kustomization.yaml']);
    const release = await repo('git-ssh', { version: 'release', location: 'charts' });
    assert.equal(release.status, 200, release.body.toString());
    assert.deepEqual(tarEntries(release.body), ['charts/hello/Chart.yaml', 'charts/hello/values.yaml']);
    const branch = await repo('git-ssh', { version: 'no-such-branch' });
    assert.equal(branch.status, 404);
  });

  test('a key with a passphrase, answered from its file', async () => {
    const res = await repo('git-locked');
    assert.equal(res.status, 200, res.body.toString());
    assert.ok(!gw.logs().includes('correct horse battery'));
  });

  test('the host key: an unknown one is refused, trusting unknown hosts accepts it', async () => {
    const wrong = await repo('git-wrong-host');
    assert.equal(wrong.status, 502);
    assert.match(springError(wrong.body).message, /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/);
    const trusting = await repo('git-trusting');
    assert.equal(trusting.status, 200, trusting.body.toString());
  });

  test('a key the server does not accept is a 502; an account without a key a 400; loopback needs allowing', async () => {
    const stranger = await repo('git-stranger');
    assert.equal(stranger.status, 502);
    assert.match(springError(stranger.body).message, /Permission denied/);
    const before = sshd.connections();
    const noKey = await repo('git-http-only');
    assert.equal(noKey.status, 400);
    assert.match(springError(noKey.body).message, /has no sshPrivateKeyFile/);
    const loopback = await repo('git-public');
    assert.equal(loopback.status, 400);
    assert.match(springError(loopback.body).message, /loopback, link-local, private or reserved/);
    assert.equal(sshd.connections(), before, 'neither reached the server');
  });

  test('no temporary directory (with its copy of the key) is left behind', () => {
    assert.ok(statSync(cloneDir!).mtimeMs > cloneDirChanged, 'the clones were made in gitRepo.cloneDir');
    assert.deepEqual(
      gitTempDirs().filter((name) => !earlier.has(name)),
      [],
    );
  });
});

describe('SSH clone URLs', () => {
  test('ssh:// and scp-like forms, pinned to the checked address, host key checked under the written name', () => {
    const url = parseSshRemote('ssh://git@git.example.com:2222/org/repo.git')!;
    assert.deepEqual(url, { user: 'git', host: 'git.example.com', port: '2222', path: '/org/repo.git', scpLike: false });
    assert.equal(pinnedSshUrl(url, '203.0.113.9', 4), 'ssh://git@203.0.113.9:2222/org/repo.git');
    assert.equal(hostKeyAlias(url), '[git.example.com]:2222');
    const scp = parseSshRemote('git@github.com:org/repo.git')!;
    assert.deepEqual(scp, { user: 'git', host: 'github.com', port: '', path: 'org/repo.git', scpLike: true });
    assert.equal(pinnedSshUrl(scp, '2001:db8::1', 6), 'git@[2001:db8::1]:org/repo.git');
    assert.equal(hostKeyAlias(scp), 'github.com');
    assert.equal(parseSshRemote('https://example.com/repo.git'), undefined);
    assert.equal(parseSshRemote('file:///etc'), undefined);
  });

  test('an SSH key needs a known_hosts file or trusting unknown hosts; a passphrase needs a key', () => {
    const parse = (account: Record<string, unknown>) => artifactsSchema.safeParse({ gitRepo: { accounts: [{ name: 'g', ...account }] } });
    const keyOnly = parse({ sshPrivateKeyFile: '/k' });
    assert.equal(keyOnly.success, false);
    assert.match(JSON.stringify(keyOnly.error?.issues), /sshKnownHostsFile/);
    assert.equal(parse({ sshPrivateKeyFile: '/k', sshTrustUnknownHosts: true }).success, true);
    assert.equal(parse({ sshPrivateKeyPassphraseFile: '/p' }).success, false);
  });
});
