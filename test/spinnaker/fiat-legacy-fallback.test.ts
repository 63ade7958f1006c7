/**
 * `spinnaker.fiat.legacyFallback` (docs/spinnaker.md, "Fiat"): with Fiat unreachable, a gateway that enables the
 * fallback decides as kork's legacy fallback view does — the accounts of the request's `X-SPINNAKER-ACCOUNTS` with
 * every authorization, every application — where the default refuses (fiat-routes.test.ts, "Fiat down"). The view is
 * built per request: one request's header never widens the next one's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack, type Stack } from '../../testkit/stack.js';
import { startTestFiat, type TestFiat } from './fiat-server.js';
import { createOrcaClient, type Obj, type OrcaClient } from './orca-client.js';
import { tokenGateway } from '../../testkit/token-gateway.js';

const TOKENS = { agent: 'fallback-agent-token-0123456789abcd', orca: 'fallback-orca-token-0123456789abcde' };

describe('Fiat legacy fallback', { concurrency: false }, () => {
  let stack: Stack;
  let fiat: TestFiat;
  const as = (user: string, accounts?: string): OrcaClient =>
    createOrcaClient(stack.gateway.httpUrl, {
      authorization: `Bearer ${TOKENS.orca}`,
      'x-spinnaker-user': user,
      ...(accounts === undefined ? {} : { 'x-spinnaker-accounts': accounts }),
    });
  const scale = (account: string) => ({ scaleManifest: { account, manifestName: 'deployment web', location: 'demo', replicas: 2 } });
  const names = (body: Obj) => (body as unknown as { name: string }[]).map((a) => a.name).sort();

  before(async () => {
    fiat = await startTestFiat({});
    fiat.down = true;
    stack = await startStack({
      gateway: {
        ...tokenGateway([
          { subject: 'agent', token: TOKENS.agent, roles: ['agent'], accounts: ['*'] },
          { subject: 'orca', token: TOKENS.orca, roles: ['spinnaker'], accounts: ['*'] },
        ]),
        spinnaker: { fiat: { baseUrl: fiat.baseUrl, legacyFallback: true } },
      },
      agents: [{ accounts: [{ name: 'sandbox' }, { name: 'second' }], config: { clouddriver: { auth: { token: TOKENS.agent } } } }],
    });
  });
  after(async () => {
    await stack?.close();
    await fiat?.close();
  });

  test("Fiat down: the header's accounts may be written and read, every application read", async () => {
    const outcome = await as('deployer', 'sandbox').monitor(await as('deployer', 'sandbox').submit([scale('sandbox')]), false);
    assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
    assert.deepEqual(names((await as('deployer', 'sandbox').get('/credentials')).body), ['sandbox']);
    assert.equal((await as('deployer', 'sandbox').manifest('sandbox', 'demo', 'deployment web')).status, 200);
    assert.ok(
      fiat.requests.some((r) => r.path === '/authorize/deployer'),
      'Fiat was asked first',
    );
  });

  test('without the header the fallback grants no account: writes refused by Fiat, lists empty', async () => {
    const refused = await as('deployer').post([scale('sandbox')]);
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.match(
      String(refused.body.message),
      /Access denied to account sandbox - required authorization: WRITE \(Fiat, user "deployer"\)/,
    );
    assert.deepEqual(names((await as('deployer').get('/credentials')).body), []);
    assert.equal((await as('deployer').get('/applications/web/clusters/sandbox')).status, 403);
  });

  test('Fiat answering again: its view decides, not the fallback', async () => {
    fiat.down = false;
    try {
      fiat.users.set('reader', { accounts: { sandbox: ['READ'] }, allowAccessToUnknownApplications: true });
      const refused = await as('reader', 'sandbox').post([scale('sandbox')]);
      assert.equal(refused.status, 400, 'READ only at Fiat, whatever the header says');
      assert.deepEqual(names((await as('reader', 'sandbox,second').get('/credentials')).body), ['sandbox']);
    } finally {
      fiat.down = true;
    }
  });
});
