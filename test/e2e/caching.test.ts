/**
 * End to end over real sockets: sandbox cluster → agent → (recording TCP proxy) → gateway → database → clients.
 * Runs on PGlite, and on Postgres when OUTPOST_TEST_POSTGRES is set.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { testDrivers } from '../../testkit/databases.js';
import { waitForCacheToMatch } from '../../testkit/cache-compare.js';
import { startStack, type Stack } from '../../testkit/stack.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const SECRET_MARKER = 's3cr3t-demo';

async function listObjects(system: Stack, body: Record<string, unknown>) {
  const res = await fetch(`${system.gateway.httpUrl}/outpost.api.v1.ObjectService/ListObjects`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as { objects?: { name: string; namespace?: string; kind: string; object?: any }[] };
}

async function syncGens(system: Stack): Promise<string> {
  const rows = await system.gateway.database.db.execute(
    sql`select api_version, kind, watch_namespace, sync_gen from watch_states where account = 'sandbox' order by 1, 2, 3`,
  );
  return JSON.stringify((rows as any).rows ?? rows);
}

async function dumpTables(system: Stack): Promise<string> {
  const parts: string[] = [];
  for (const table of ['accounts', 'objects', 'watch_states']) {
    const rows = await system.gateway.database.db.execute(sql.raw(`select t::text as row from ${table} t`));
    parts.push(JSON.stringify((rows as any).rows ?? rows));
  }
  return parts.join('\n');
}

for (const driver of testDrivers()) {
  describe(`caching path end to end (${driver})`, { concurrency: false }, () => {
    let system: Stack;
    before(async () => {
      system = await startStack({ driver, persistent: true });
    });
    after(async () => {
      await system?.close();
    });

    test('the cache fills, follows creates/updates/deletes, and never holds a Secret value', async () => {
      await system.startAgent();
      const first = await waitForCacheToMatch(system.gateway.database, system.sandbox, 'sandbox', { timeoutMs: 20_000 });
      assert.ok(first.clusterCount > 5, `expected the demo seed in the cache, compared ${first.clusterCount}`);

      const { store } = system.sandbox;
      store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'e2e-new', namespace: 'demo' }, data: { a: '1' } });
      const cm = store.get('v1', 'ConfigMap', 'demo', 'web-config')!;
      store.update({ ...cm, data: { ...(cm.data as object), changed: 'yes' } });
      store.remove('v1', 'ConfigMap', 'demo', 'e2e-new');
      store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'e2e-kept', namespace: 'demo' }, data: { b: '2' } });
      store.create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'e2e-secret', namespace: 'demo' },
        stringData: { token: SECRET_MARKER },
      });
      await waitForCacheToMatch(system.gateway.database, system.sandbox, 'sandbox');

      const page = await listObjects(system, { account: 'sandbox', kind: 'ConfigMap', namespace: 'demo' });
      const names = (page.objects ?? []).map((o) => o.name).sort();
      assert.ok(names.includes('e2e-kept') && names.includes('web-config') && !names.includes('e2e-new'), names.join());
      const webConfig = page.objects!.find((o) => o.name === 'web-config')!;
      assert.equal(webConfig.object.data.changed, 'yes');

      const secrets = await listObjects(system, { account: 'sandbox', kind: 'Secret', namespace: 'demo' });
      assert.ok(
        (secrets.objects ?? []).some((o) => o.name === 'web-secret'),
        'the Secret object itself is cached',
      );
      for (const s of secrets.objects ?? []) {
        assert.equal(s.object.data, undefined);
        assert.equal(s.object.stringData, undefined);
      }
      const wire = system.proxy.upstreamBytes();
      assert.ok(wire.length > 1000, 'the proxy saw the agent stream');
      assert.equal(wire.indexOf(SECRET_MARKER), -1, 'a Secret value crossed the wire');
      assert.equal(wire.indexOf(Buffer.from(SECRET_MARKER).toString('base64')), -1, 'a base64 Secret value crossed the wire');
      const tables = await dumpTables(system);
      assert.ok(tables.includes('web-secret'));
      assert.ok(!tables.includes(SECRET_MARKER) && !tables.includes(Buffer.from(SECRET_MARKER).toString('base64')));
    });

    test('buf curl lists the cache over gRPC (HTTP/2)', async () => {
      const { stdout } = await run(
        `${repo}node_modules/.bin/buf`,
        [
          'curl',
          '--protocol',
          'grpc',
          '--http2-prior-knowledge',
          '--schema',
          `${repo}proto`,
          '-d',
          JSON.stringify({ account: 'sandbox', kind: 'Deployment', omitObject: true }),
          `${system.gateway.grpcUrl}/outpost.api.v1.ObjectService/ListObjects`,
        ],
        { timeout: 30_000 },
      );
      const body = JSON.parse(stdout) as { objects: { name: string }[] };
      assert.ok(
        body.objects.some((o) => o.name === 'web'),
        stdout,
      );
    });

    test('an agent restarted with a fresh resume point resumes without re-listing and converges', async () => {
      const before = await syncGens(system);
      // Restart the agent: close the running one first.
      const agentsBefore = await listAgentStateCount(system);
      assert.ok(agentsBefore > 0);
      await system.stopAgents();
      const { store } = system.sandbox;
      store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'while-down', namespace: 'demo' } });
      await system.startAgent();
      await waitForCacheToMatch(system.gateway.database, system.sandbox, 'sandbox');
      assert.equal(await syncGens(system), before, 'a scope was re-listed although a fresh resume point existed');
    });

    test('a restarted gateway gets the agent back and the cache converges', async () => {
      await system.restartGateway();
      system.sandbox.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-gw-restart', namespace: 'demo' } });
      await waitForCacheToMatch(system.gateway.database, system.sandbox, 'sandbox', { timeoutMs: 30_000 });
    });

    test('kinds forbidden by RBAC are skipped and reported, the others are cached', async () => {
      await system.startAgent({ id: 'agent-restricted', account: { name: 'restricted', user: 'restricted' } });
      await waitForCacheToMatch(system.gateway.database, system.sandbox, 'restricted');
      const res = await fetch(`${system.gateway.httpUrl}/outpost.api.v1.AccountService/ListAccounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'restricted' }),
      });
      assert.equal(res.status, 200);
      const { accounts } = (await res.json()) as {
        accounts: { name: string; state: string; kinds?: { kind: string }[]; skippedKinds?: { kind: string; reason: string }[] }[];
      };
      assert.equal(accounts.length, 1);
      const [account] = accounts;
      assert.equal(account!.state, 'ACTIVE');
      const cached = (account!.kinds ?? []).map((k) => k.kind);
      const skipped = account!.skippedKinds ?? [];
      assert.ok(cached.includes('Pod') && cached.includes('Deployment'), `cached kinds: ${cached.join()}`);
      assert.ok(!cached.includes('Secret'), 'a forbidden kind was cached');
      const secret = skipped.find((k) => k.kind === 'Secret');
      assert.ok(secret && secret.reason.length > 0, `skipped kinds: ${JSON.stringify(skipped)}`);
      assert.ok(skipped.some((k) => k.kind === 'StatefulSet'));
    });

    test('410 Gone forces a re-list that prunes what was deleted meanwhile', async () => {
      await system.stopAgents();
      const { store } = system.sandbox;
      store.remove('v1', 'ConfigMap', 'demo', 'while-down');
      store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-410', namespace: 'demo' } });
      system.sandbox.faults.expireHistory();
      const before = await syncGens(system);
      await system.startAgent();
      await waitForCacheToMatch(system.gateway.database, system.sandbox, 'sandbox', { timeoutMs: 30_000 });
      assert.notEqual(await syncGens(system), before, 'expected a full re-list after 410');
      await sleep(10);
    });
  });
}

async function listAgentStateCount(system: Stack): Promise<number> {
  const rows = await system.gateway.database.db.execute(sql`select count(*)::int as n from accounts where state = 'ACTIVE'`);
  return Number(((rows as any).rows ?? rows)[0].n);
}
