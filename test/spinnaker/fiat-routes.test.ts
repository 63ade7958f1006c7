/**
 * Fiat on the Clouddriver routes (docs/spinnaker.md, "Fiat"), against the sandbox, an agent serving accounts `sandbox`
 * and `second`, and a small Fiat (./fiat-server.ts). Orca's token has the spinnaker role on every account, so what
 * is refused here is refused by Fiat for the user of `X-SPINNAKER-USER`: ops need WRITE on the account (a 400 that
 * creates no task, as Clouddriver's description authorizer answers, audited), reads need READ (lists filtered,
 * single objects 403, the manifest's application READ too), Fiat's 404 is a user with nothing, a request without a
 * user is `anonymous`, a change at Fiat shows after the cache TTL (the gateway's Fiat clock is moved, never slept
 * on), and Fiat down refuses writes and single reads with 503 and lists nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { startTestFiat, type TestFiat } from './fiat-server.js';
import { tokenGateway } from '../../testkit/token-gateway.js';
import { createOrcaClient, type Obj, type OrcaClient } from './orca-client.js';

const TOKENS = { agent: 'fiat-agent-token-0123456789abcdef', orca: 'fiat-orca-token-0123456789abcdef' };
const OPEN_APPS = { allowAccessToUnknownApplications: true };

describe('Fiat on the Clouddriver routes', { concurrency: false }, () => {
  let stack: Stack;
  let fiat: TestFiat;
  let clock = 0;
  const as = (user?: string): OrcaClient =>
    createOrcaClient(stack.gateway.httpUrl, {
      authorization: `Bearer ${TOKENS.orca}`,
      ...(user === undefined ? {} : { 'x-spinnaker-user': user }),
    });
  const scale = (account: string, replicas = 2) => ({
    scaleManifest: { account, manifestName: 'deployment web', location: 'demo', replicas },
  });
  const names = (body: Obj) => (body as unknown as { name: string }[]).map((a) => a.name).sort();
  const springShaped = (res: { status: number; body: Obj }, status: number) => {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.equal(res.body.status, status);
    assert.equal(typeof res.body.timestamp, 'string');
    assert.equal(typeof res.body.error, 'string');
    assert.equal(typeof res.body.path, 'string');
  };

  before(async () => {
    fiat = await startTestFiat({
      admin: { admin: true },
      reader: { accounts: { sandbox: ['READ'] }, ...OPEN_APPS },
      deployer: { accounts: { sandbox: ['READ', 'WRITE'] }, ...OPEN_APPS },
      noweb: { accounts: { sandbox: ['READ'] }, applications: { web: [] }, ...OPEN_APPS },
      later: { accounts: { sandbox: ['READ'] }, ...OPEN_APPS },
      anonymous: { accounts: { second: ['READ'] }, ...OPEN_APPS },
    });
    stack = await startStack({
      gateway: {
        ...tokenGateway([
          { subject: 'agent', token: TOKENS.agent, roles: ['agent'], accounts: ['*'] },
          { subject: 'orca', token: TOKENS.orca, roles: ['spinnaker'], accounts: ['*'] },
        ]),
        spinnaker: { fiat: { baseUrl: fiat.baseUrl, cacheTtlSeconds: 10 } },
      },
      gatewayDeps: { fiatClock: () => clock },
      agents: [{ accounts: [{ name: 'sandbox' }, { name: 'second' }], config: { clouddriver: { auth: { token: TOKENS.agent } } } }],
    });
  });
  after(async () => {
    await stack?.close();
    await fiat?.close();
  });

  test('a user without WRITE on the account is refused an operation: a 400 that creates no task, in the audit log', async () => {
    const refused = await as('reader').post([scale('sandbox')], 'fiat-refused-1');
    springShaped(refused, 400);
    assert.match(String(refused.body.message), /Access denied to account sandbox - required authorization: WRITE \(Fiat, user "reader"\)/);
    // The same request id for a user who may: a new task runs, so the refused submission stored nothing under it.
    const outcome = await as('deployer').monitor(await as('deployer').submit([scale('sandbox')], 'fiat-refused-1'), false);
    assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
    const entry = await eventually('the refusal in the audit log', async () => {
      const { entries } = await stack.gateway.audit.list({ kind: 'operation', account: 'sandbox', principal: 'token:orca' });
      return entries.find((e) => e.status === 400 && /Access denied to account sandbox/.test(e.error));
    });
    assert.equal(entry.verb, 'scaleManifest');
    // An account named by `credentials` is checked the same way.
    const byCredentials = await as('reader').post([
      { scaleManifest: { credentials: 'sandbox', manifestName: 'deployment web', location: 'demo', replicas: 2 } },
    ]);
    springShaped(byCredentials, 400);
    // Every description is checked: one the user may not write refuses the whole submission.
    const mixed = await as('deployer').post([scale('sandbox'), scale('second')]);
    assert.match(String(mixed.body.message), /Access denied to account second - required authorization: WRITE/);
  });

  test('READ+WRITE may operate on its account, an admin on every account; a user Fiat does not know on none', async () => {
    const deployed = await as('deployer').run(
      'deployManifest',
      {
        account: 'sandbox',
        cloudProvider: 'kubernetes',
        source: 'text',
        moniker: { app: 'fiat' },
        manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fiat-config', namespace: 'demo' }, data: { a: '1' } }],
      },
      true,
    );
    assert.equal(deployed.status, 'SUCCEEDED', JSON.stringify(deployed.task));
    assert.equal((await as('admin').monitor(await as('admin').submit([scale('second')]), false)).status, 'SUCCEEDED');
    const stranger = await as('stranger').post([scale('sandbox')]);
    springShaped(stranger, 400);
    assert.match(String(stranger.body.message), /Access denied to account sandbox/);
    assert.ok(fiat.requests.some((r) => r.path === '/authorize/stranger'));
  });

  test('a user without READ on an account sees nothing of it: credentials filtered, manifests, jobs and tasks refused', async () => {
    const reader = as('reader');
    assert.deepEqual(names((await reader.get('/credentials')).body), ['sandbox']);
    assert.deepEqual(names((await reader.get('/credentials?expand=true')).body), ['sandbox']);
    assert.equal((await reader.get('/credentials/second')).status, 404);
    assert.equal((await reader.get('/credentials/sandbox')).status, 200);

    const manifest = await reader.manifest('second', 'demo', 'deployment web');
    springShaped(manifest, 403);
    assert.match(String(manifest.body.message), /Access denied to account second - required authorization: READ/);
    assert.equal((await reader.manifest('sandbox', 'demo', 'deployment web')).status, 200);
    springShaped(await reader.get('/manifests/second/demo/deployment/cluster/web/deployment%20web'), 403);

    const job = await reader.get('/applications/web/jobs/second/demo/job%20x');
    springShaped(job, 403);
    // Cancelling a job needs WRITE on the account (and EXECUTE on the application), as Clouddriver's JobController.
    const cancel = await fetch(`${stack.gateway.httpUrl}/applications/web/jobs/sandbox/demo/job%20x`, {
      method: 'DELETE',
      headers: { ...reader.headers },
    });
    assert.equal(cancel.status, 403);
    assert.match(((await cancel.json()) as Obj).message, /Access denied to account sandbox - required authorization: WRITE/);

    const taskOfSecond = await as('admin').submit([scale('second', 1)]);
    springShaped(await reader.get(`/task/${taskOfSecond}`), 403);
    assert.equal((await as('admin').get(`/task/${taskOfSecond}`)).status, 200);

    // A user Fiat does not know (its 404) sees no account at all.
    assert.deepEqual(names((await as('stranger').get('/credentials')).body), []);
    springShaped(await as('stranger').manifest('sandbox', 'demo', 'deployment web'), 403);
  });

  test("a manifest needs READ on its moniker's application too (Clouddriver's @PostAuthorize)", async () => {
    const refused = await as('noweb').manifest('sandbox', 'demo', 'deployment web');
    springShaped(refused, 403);
    assert.match(String(refused.body.message), /Access denied to application web - required authorization: READ/);
    assert.equal((await as('noweb').manifest('sandbox', 'demo', 'service web')).status, 403, 'the service is of app web too');
    assert.equal((await as('reader').manifest('sandbox', 'demo', 'deployment web')).status, 200);
  });

  test("Deck's infrastructure views: accounts filtered by READ, applications by application READ", async () => {
    // The agent serves the one sandbox as two accounts: application web has server groups in both.
    const admin = await eventually('web in both accounts for the admin', async () => {
      const res = await as('admin').get('/applications/web/clusters');
      return res.status === 200 && Object.keys(res.body).length === 2 ? res.body : undefined;
    });
    assert.deepEqual(Object.keys(admin).sort(), ['sandbox', 'second']);
    // READ on sandbox only: second is left out of every list and its single objects are refused.
    assert.deepEqual(Object.keys((await as('reader').get('/applications/web/clusters')).body), ['sandbox']);
    const apps = (await as('reader').get('/applications')).body as unknown as { name: string; clusterNames: Obj }[];
    assert.deepEqual(Object.keys(apps.find((a) => a.name === 'web')!.clusterNames), ['sandbox']);
    const groups = (await as('reader').get('/applications/web/serverGroups')).body as unknown as { account: string }[];
    assert.ok(groups.length > 0 && groups.every((g) => g.account === 'sandbox'));
    const [sg] = (await as('admin').get('/applications/web/serverGroups')).body as unknown as {
      account: string;
      name: string;
      region: string;
    }[];
    springShaped(await as('reader').get(`/applications/web/serverGroups/second/${sg!.region}/${encodeURIComponent(sg!.name)}`), 403);
    // No READ on application web: its routes are refused, and it is left out of the application list and searches.
    springShaped(await as('noweb').get('/applications/web'), 403);
    springShaped(await as('noweb').get('/applications/web/serverGroups'), 403);
    const listed = (await as('noweb').get('/applications')).body as unknown as { name: string }[];
    assert.ok(!listed.some((a) => a.name === 'web'));
    const search = (await as('noweb').get('/search?q=web&type=serverGroups')).body as unknown as { results: Obj[] }[];
    assert.ok(!search[0]!.results.some((r) => r.application === 'web'));
  });

  test('a request without X-SPINNAKER-USER is the anonymous user; /credentials without a user is not narrowed', async () => {
    const anonymous = as();
    assert.equal((await anonymous.manifest('second', 'demo', 'deployment web')).status, 200);
    springShaped(await anonymous.manifest('sandbox', 'demo', 'deployment web'), 403);
    assert.ok(fiat.requests.some((r) => r.path === '/authorize/anonymous' && r.headers['x-spinnaker-user'] === undefined));
    assert.deepEqual(names((await anonymous.get('/credentials')).body), ['sandbox', 'second']);
  });

  test('a permission granted at Fiat is used after the cache TTL, not before', async () => {
    springShaped(await as('later').post([scale('sandbox')]), 400);
    fiat.users.set('later', { accounts: { sandbox: ['READ', 'WRITE'] }, ...OPEN_APPS });
    clock += 9_000;
    springShaped(await as('later').post([scale('sandbox')]), 400);
    clock += 1_001;
    assert.equal((await as('later').post([scale('sandbox')])).status, 200);
  });

  test('Fiat down: writes and single reads 503, lists empty, nothing created; back when Fiat answers again', async () => {
    const taskOfSandbox = await as('deployer').submit([scale('sandbox', 1)]);
    clock += 60_000;
    fiat.down = true;
    try {
      const write = await as('deployer').post([scale('sandbox')], 'fiat-down-1');
      springShaped(write, 503);
      assert.match(String(write.body.message), /Fiat could not answer for user "deployer"/);
      springShaped(await as('deployer').manifest('sandbox', 'demo', 'deployment web'), 503);
      springShaped(await as('deployer').get(`/task/${taskOfSandbox}`), 503);
      springShaped(await as('deployer').get('/credentials/sandbox'), 503);
      assert.deepEqual(names((await as('deployer').get('/credentials')).body), []);
      const metrics = await (
        await fetch(`${stack.gateway.httpUrl}/metrics`, { headers: { authorization: `Bearer ${TOKENS.orca}` } })
      ).text();
      assert.match(metrics, /outpost_gateway_fiat_lookups_total\{result="failure"\} [1-9]/);
      assert.match(metrics, /outpost_gateway_fiat_lookups_total\{result="hit"\} [1-9]/);
    } finally {
      fiat.down = false;
    }
    const outcome = await as('deployer').monitor(await as('deployer').submit([scale('sandbox')], 'fiat-down-1'), false);
    assert.equal(outcome.status, 'SUCCEEDED', 'the refused submission stored nothing under its request id');
  });
});
