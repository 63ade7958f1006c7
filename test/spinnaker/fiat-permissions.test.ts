/**
 * The Fiat client and its cache (src/gateway/spinnaker/fiat/), against a small Fiat: the view is read as kork's
 * FiatPermissionEvaluator reads it (admin grants all, names compared ignoring case, unknown applications by
 * `allowAccessToUnknownApplications`), Fiat's 404 is a user without permissions, a failure is never cached, the
 * cache serves a user for its TTL and asks again after it (an injected clock, no sleeping), and the calls are bounded
 * and carry the token from the token file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createFiatClient, FiatUnavailableError } from '../../src/gateway/spinnaker/fiat/fiat-client.js';
import { createFiatPermissions } from '../../src/gateway/spinnaker/fiat/fiat-permissions.js';
import { parseUserPermission, permits } from '../../src/gateway/spinnaker/fiat/user-permission.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { startTestFiat, type TestFiat } from './fiat-server.js';

const CLIENT = { timeoutSeconds: 5, maxResponseBytes: 64 * 1024 };

describe('reading a Fiat permission view', () => {
  test('accounts and applications by authorization, names ignoring case; admin grants everything', () => {
    const view = parseUserPermission(
      {
        name: 'alice',
        accounts: [{ name: 'Prod', authorizations: ['READ'] }],
        applications: [{ name: 'web', authorizations: ['READ', 'WRITE'] }],
        admin: false,
      },
      'alice',
    );
    assert.equal(permits(view, 'ACCOUNT', 'prod', 'READ'), true);
    assert.equal(permits(view, 'ACCOUNT', 'PROD', 'WRITE'), false);
    assert.equal(permits(view, 'ACCOUNT', 'other', 'READ'), false);
    assert.equal(permits(view, 'APPLICATION', 'WEB', 'WRITE'), true);
    assert.equal(permits(view, 'APPLICATION', 'web', 'EXECUTE'), false);
    assert.equal(permits(view, 'APPLICATION', 'unlisted', 'READ'), false, 'unknown applications are refused by default');
    const admin = parseUserPermission({ name: 'root', admin: true }, 'root');
    assert.equal(permits(admin, 'ACCOUNT', 'anything', 'WRITE'), true);
    assert.equal(permits(admin, 'ACCOUNT', '', 'READ'), false, 'an unnamed resource is refused, as the evaluator refuses null');
    assert.equal(permits(parseUserPermission({ isAdmin: true }, 'x'), 'ACCOUNT', 'a', 'WRITE'), true);
  });

  test('allowAccessToUnknownApplications opens applications the view does not list, not the ones it lists', () => {
    const view = parseUserPermission(
      { name: 'bob', applications: [{ name: 'locked', authorizations: [] }], allowAccessToUnknownApplications: true },
      'bob',
    );
    assert.equal(permits(view, 'APPLICATION', 'anything', 'WRITE'), true);
    assert.equal(permits(view, 'APPLICATION', 'locked', 'READ'), false);
    assert.equal(permits(view, 'ACCOUNT', 'anything', 'READ'), false, 'accounts have no such opening');
  });

  test('a view that is not one is an error, not fewer permissions', () => {
    assert.throws(() => parseUserPermission([], 'x'), /not a JSON object/);
    assert.throws(() => parseUserPermission({ accounts: 'prod' }, 'x'), /accounts is not a list/);
    assert.throws(() => parseUserPermission({ accounts: [{ authorizations: ['READ'] }] }, 'x'), /has no name/);
  });
});

describe('the Fiat client and cache', () => {
  let fiat: TestFiat;
  let dir: string;
  before(async () => {
    fiat = await startTestFiat({ alice: { accounts: { prod: ['READ'] } }, anonymous: { accounts: { open: ['READ'] } } });
    dir = mkdtempSync(join(tmpdir(), 'outpost-fiat-'));
  });
  after(async () => {
    await fiat.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("asks GET /authorize/{user} with the user's header and the token of the token file; 404 is no permissions", async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'fiat-token-123\n');
    const client = createFiatClient({ ...CLIENT, baseUrl: fiat.baseUrl, tokenFile });
    const alice = await client.userPermission('Alice');
    assert.equal(permits(alice, 'ACCOUNT', 'prod', 'READ'), true);
    const asked = fiat.requests.at(-1)!;
    assert.equal(asked.path, '/authorize/Alice');
    assert.equal(asked.headers['x-spinnaker-user'], 'Alice');
    assert.equal(asked.headers.authorization, 'Bearer fiat-token-123');
    const nobody = await client.userPermission('nobody');
    assert.equal(nobody.admin, false);
    assert.equal(nobody.accounts.size, 0);
    await client.userPermission('anonymous');
    assert.equal(fiat.requests.at(-1)!.headers['x-spinnaker-user'], undefined, 'anonymous is asked without a user header');
  });

  test('unreachable, an unexpected status, an oversized or unreadable answer, a missing token file: FiatUnavailableError', async () => {
    fiat.down = true;
    try {
      await assert.rejects(createFiatClient({ ...CLIENT, baseUrl: fiat.baseUrl }).userPermission('alice'), FiatUnavailableError);
    } finally {
      fiat.down = false;
    }
    await assert.rejects(
      createFiatClient({ ...CLIENT, baseUrl: fiat.baseUrl, tokenFile: join(dir, 'missing') }).userPermission('alice'),
      /cannot read spinnaker\.fiat\.tokenFile .*ENOENT/,
    );
    const odd = createServer((req, res) => {
      if (req.url === '/authorize/big') res.end(JSON.stringify({ name: 'big', roles: 'x'.repeat(4096) }));
      else if (req.url === '/authorize/text') res.end('<html>');
      else if (req.url === '/authorize/slow') return;
      else res.writeHead(500).end('{}');
    });
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}/`;
    try {
      const client = createFiatClient({ timeoutSeconds: 0.3, maxResponseBytes: 1024, baseUrl });
      await assert.rejects(client.userPermission('big'), /larger than 1024 bytes/);
      await assert.rejects(client.userPermission('text'), /not a permission view/);
      await assert.rejects(client.userPermission('err'), /HTTP 500/);
      await assert.rejects(client.userPermission('slow'), /did not answer/);
    } finally {
      odd.closeAllConnections();
      await new Promise<void>((resolve) => odd.close(() => resolve()));
    }
  });

  test('a change at Fiat is seen after the TTL, not before; failures are not cached; lookups are counted', async () => {
    let clock = 0;
    const counted: string[] = [];
    const permissions = createFiatPermissions({
      client: createFiatClient({ ...CLIENT, baseUrl: fiat.baseUrl }),
      ttlMs: 10_000,
      maxEntries: 10,
      logger: createSilentLogger(),
      metrics: { fiatLookup: (result) => counted.push(result) },
      now: () => clock,
    });
    const canWrite = async () => {
      const found = await permissions.lookup('alice');
      assert.ok(found.ok);
      return permits(found.permission, 'ACCOUNT', 'prod', 'WRITE');
    };
    assert.equal(await canWrite(), false);
    fiat.users.set('alice', { accounts: { prod: ['READ', 'WRITE'] } });
    clock = 9_999;
    assert.equal(await canWrite(), false, 'still the cached answer before the TTL');
    clock = 10_001;
    assert.equal(await canWrite(), true, 'asked again after the TTL');
    assert.deepEqual(counted, ['miss', 'hit', 'miss']);

    clock = 30_000;
    fiat.down = true;
    try {
      const failed = await permissions.lookup('alice');
      assert.equal(failed.ok, false, 'an expired answer is not used when Fiat fails');
      assert.match(failed.ok ? '' : failed.reason, /calling Fiat at http:\/\/127\.0\.0\.1:\d+ failed/);
    } finally {
      fiat.down = false;
    }
    assert.equal(await canWrite(), true, 'the failure was not cached');
    assert.deepEqual(counted, ['miss', 'hit', 'miss', 'failure', 'miss']);
  });

  test('concurrent lookups of one user share one call', async () => {
    const permissions = createFiatPermissions({
      client: createFiatClient({ ...CLIENT, baseUrl: fiat.baseUrl }),
      ttlMs: 10_000,
      maxEntries: 10,
      logger: createSilentLogger(),
    });
    const before = fiat.requests.length;
    const answers = await Promise.all(Array.from({ length: 20 }, () => permissions.lookup('ALICE')));
    assert.ok(answers.every((a) => a.ok));
    assert.equal(fiat.requests.length - before, 1);
  });
});
