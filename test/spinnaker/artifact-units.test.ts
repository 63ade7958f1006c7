/**
 * The parts of artifact fetching that need no server: which addresses an account may reach (every refused range,
 * IPv4-mapped forms, the allowed networks), Helm's version order, the scrubbing of messages, the spool's limit and
 * its temporary file, the `spinnaker.artifacts` schema and when `no-auth-http-account` exists.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { loadGatewayConfig } from '../../src/gateway/config/load.js';
import { createArtifactAccounts } from '../../src/gateway/spinnaker/artifacts/artifact-accounts.js';
import { artifactsSchema } from '../../src/gateway/config/artifacts-schema.js';
import { scrubMessage } from '../../src/gateway/spinnaker/artifacts/artifact-errors.js';
import { spoolBounded } from '../../src/gateway/spinnaker/artifacts/artifact-spool.js';
import { compareVersions, latestVersion } from '../../src/gateway/spinnaker/artifacts/helm-index.js';
import { checkTarget, createTargetPolicy } from '../../src/gateway/spinnaker/artifacts/target-policy.js';

describe('artifact target policy', () => {
  const strict = createTargetPolicy([]);
  test('loopback, link-local, unspecified, private and reserved addresses are refused; public ones pass', () => {
    const refused = [
      '127.0.0.1',
      '127.255.0.9',
      '::1',
      '169.254.169.254',
      'fe80::1',
      '0.0.0.0',
      '::',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::7f00:1',
      '224.0.0.1',
      '255.255.255.255',
    ];
    for (const address of refused) assert.ok(strict.refusal(address), `${address} is refused`);
    for (const address of ['8.8.8.8', '140.82.112.3', '2606:4700::1111', '172.32.0.1'])
      assert.equal(strict.refusal(address), undefined, address);
  });
  test('an account reaches the networks it lists, and only those', () => {
    const local = createTargetPolicy(['127.0.0.1/32', '10.20.0.0/16']);
    assert.equal(local.refusal('127.0.0.1'), undefined);
    assert.equal(local.refusal('::ffff:127.0.0.1'), undefined);
    assert.equal(local.refusal('10.20.9.9'), undefined);
    assert.ok(local.refusal('127.0.0.2'));
    assert.ok(local.refusal('10.21.0.1'));
    assert.ok(local.refusal('169.254.169.254'));
  });
  test('names are resolved and checked; IP literals (bracketed IPv6 too) are checked as they are', async () => {
    await assert.rejects(checkTarget('localhost', strict), /loopback/);
    await assert.rejects(checkTarget('[::1]', strict), /loopback/);
    assert.deepEqual(await checkTarget('[::1]', createTargetPolicy(['::1/128'])), { hostname: '::1', address: '::1', family: 6 });
  });
});

describe('Helm version order', () => {
  test('numeric per part, a pre-release before its release, a leading v and build metadata ignored', () => {
    assert.ok(compareVersions('1.10.0', '1.9.0') > 0);
    assert.ok(compareVersions('1.10.0-rc.1', '1.10.0') < 0);
    assert.ok(compareVersions('1.10.0-rc.2', '1.10.0-rc.10') < 0);
    assert.ok(compareVersions('1.0.0-alpha', '1.0.0-alpha.1') < 0);
    assert.ok(compareVersions('1.0.0-1', '1.0.0-alpha') < 0);
    assert.equal(compareVersions('v1.2.3', '1.2.3+build.5'), 0);
    assert.equal(compareVersions('1.2', '1.2.0'), 0);
    assert.equal(latestVersion(['0.2.0', '1.9.0', '1.10.0-rc.1', '1.10.0', '1.2.0']), '1.10.0');
  });
});

describe('message scrubbing', () => {
  test('URL credentials and the given secrets are replaced', () => {
    assert.equal(
      scrubMessage('fetch https://bob:hunter22@repo.example/x and git://tok@h/y failed: hunter22', ['hunter22']),
      'fetch https://***@repo.example/x and git://***@h/y failed: ***',
    );
  });
});

describe('artifact spool', () => {
  test('small bodies stay in memory, larger ones go to a temporary file removed once streamed; past the limit is an error', async () => {
    const small = await spoolBounded(Readable.from([Buffer.from('abc')]), 100, 'x');
    assert.equal(small.size, 3);
    const dir = mkdtempSync(join(tmpdir(), 'outpost-spool-test-'));
    const chunks = Array.from({ length: 10 }, (_, i) => Buffer.alloc(10, 48 + i));
    const big = await spoolBounded(Readable.from(chunks), 100, 'x', { memoryBytes: 25, tempDir: dir });
    assert.equal(big.size, 100);
    assert.equal(readdirSync(dir).length, 1, 'a temporary file holds it');
    let text = '';
    for await (const chunk of big.stream()) text += chunk.toString();
    assert.equal(text, chunks.map((c) => c.toString()).join(''));
    await new Promise((resolve) => setImmediate(resolve));
    await big.dispose();
    assert.deepEqual(readdirSync(dir), [], 'removed after streaming');
    await assert.rejects(
      spoolBounded(Readable.from([...chunks, Buffer.from('!')]), 100, 'the thing', { memoryBytes: 25, tempDir: dir }),
      (err: Error & { status?: number }) => {
        assert.equal(err.status, 502);
        assert.match(err.message, /the thing is larger than 100 bytes/);
        return true;
      },
    );
    assert.deepEqual(readdirSync(dir), [], 'removed after a refusal');
  });
});

describe('spinnaker.artifacts configuration', () => {
  const load = (artifacts: unknown) => loadGatewayConfig({ env: {}, overrides: { spinnaker: { artifacts: artifacts as never } } });
  test('defaults, and clear refusals', () => {
    const defaults = load({}).spinnaker.artifacts;
    assert.equal(defaults.maxBytes, 100 * 1024 * 1024);
    assert.equal(defaults.maxRedirects, 5);
    assert.deepEqual(defaults.http, { noAuthAccount: false, accounts: [] });
    assert.throws(() => load({ http: { accounts: [{ name: 'a', allowedPrivateNetworks: ['10.0.0.0'] }] } }), /CIDR/);
    assert.throws(() => load({ http: { accounts: [{ name: 'a', username: 'u', tokenFile: '/t' }] } }), /either tokenFile or username/);
    assert.throws(() => load({ http: { accounts: [{ name: 'a', passwordFile: '/p' }] } }), /needs a username/);
    assert.throws(() => load({ http: { accounts: [{ name: 'embedded-artifact' }] } }), /defines itself/);
    assert.throws(() => load({ helm: { accounts: [{ name: 'h', repository: 'ftp://x' }] } }), /repository/);
    assert.throws(() => load({ http: { accounts: [{ name: 'a' }, { name: 'a' }] } }), /listed twice/);
    assert.throws(() => load({ http: { accounts: [{ name: 'a', password: 'inline' }] } }), /password/);
  });
  test('relative credential files are resolved against the config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-artifact-config-'));
    writeFileSync(
      join(dir, 'gateway.yaml'),
      'spinnaker:\n  artifacts:\n    http:\n      accounts:\n        - {name: a, tokenFile: secrets/t}\n',
    );
    const config = loadGatewayConfig({ file: join(dir, 'gateway.yaml'), env: {} });
    assert.equal(config.spinnaker.artifacts.http.accounts[0]!.tokenFile, join(dir, 'secrets/t'));
  });
  test('no-auth-http-account exists when asked for and no http account uses credentials, as in Clouddriver', () => {
    const names = (artifacts: unknown) => createArtifactAccounts(artifactsSchema.parse(artifacts)).all.map((a) => a.name);
    assert.ok(!names({}).includes('no-auth-http-account'));
    assert.ok(names({ http: { noAuthAccount: true } }).includes('no-auth-http-account'));
    assert.ok(names({ http: { noAuthAccount: true, accounts: [{ name: 'plain' }] } }).includes('no-auth-http-account'));
    const dir = mkdtempSync(join(tmpdir(), 'outpost-artifact-auth-'));
    writeFileSync(join(dir, 't'), 'token');
    assert.ok(
      !names({ http: { noAuthAccount: true, accounts: [{ name: 'authed', tokenFile: join(dir, 't') }] } }).includes('no-auth-http-account'),
    );
    assert.throws(
      () => names({ http: { accounts: [{ name: 'gone', tokenFile: join(dir, 'missing') }] } }),
      /artifact account gone: tokenFile: cannot read/,
    );
  });
});
