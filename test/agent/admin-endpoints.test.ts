import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { create } from '@bufbuild/protobuf';
import { durationFromMs } from '@bufbuild/protobuf/wkt';
import { AccountAction, AckSchema, ConnectResponseSchema, SyncPhase, Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { OperationSchema } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { AdminQueryError, PAGING, parseQuery } from '../../src/agent/admin/admin-query.js';
import { readiness } from '../../src/agent/admin/readiness.js';
import type { AgentStatus } from '../../src/agent/index.js';
import { markersOf, startHarness, type Harness } from './helpers/harness.js';
import { eventually } from '../../testkit/eventually.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** GET (or another method) on the agent's admin port: status, JSON body, headers. */
async function admin(h: Harness, path: string, method = 'GET'): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await fetch(`http://127.0.0.1:${h.agent.adminPort}${path}`, { method });
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `${method} ${path} answers JSON`);
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}

/** Asks `path` until `predicate` holds on its answer (testkit's `eventually`; a timeout shows the last answer). */
function adminUntil(h: Harness, path: string, predicate: (a: { status: number; body: Json }) => boolean, what: string, timeoutMs?: number) {
  return eventually(
    what,
    async () => {
      const answer = await admin(h, path);
      if (!predicate(answer)) throw new Error(`answer ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer;
    },
    { timeoutMs },
  );
}

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('agent admin endpoints: pieces', () => {
  test('query parsing: defaults, typed values, and every kind of bad value is an AdminQueryError', () => {
    const spec = {
      name: { type: 'string' },
      dynamic: { type: 'boolean' },
      state: { type: 'enum', values: ['a', 'b'] },
      ...PAGING,
    } as const;
    assert.deepEqual(parseQuery(new URLSearchParams(''), spec), { limit: 100, offset: 0 });
    assert.deepEqual(parseQuery(new URLSearchParams('name=x&dynamic=false&state=b&limit=1000&offset=7'), spec), {
      name: 'x',
      dynamic: false,
      state: 'b',
      limit: 1000,
      offset: 7,
    });
    for (const bad of [
      'limit=0',
      'limit=1001',
      'limit=1.5',
      'limit=',
      'limit=ten',
      'offset=-1',
      'dynamic=yes',
      'state=c',
      'colour=red',
      'name=a&name=b',
    ]) {
      assert.throws(() => parseQuery(new URLSearchParams(bad), spec), AdminQueryError, bad);
    }
    assert.throws(() => parseQuery(new URLSearchParams('x=1'), {}), /takes none/);
  });

  test('readiness: not connected, waiting for a verdict, listing; standby, refused and unreachable accounts count as reported', () => {
    const watch = (kind: string, synced: boolean, namespace = '') =>
      ({
        apiVersion: 'v1',
        kind,
        namespace,
        state: synced ? 'watching' : 'listing',
        resourceVersion: '',
        listed: 0,
        synced,
        startedAt: 0,
      }) as const;
    const account = (
      name: string,
      verdict: AgentStatus['accounts'][number]['verdict'],
      watches: ReturnType<typeof watch>[] = [],
      error?: string,
    ) => ({ name, source: 'file', verdict, watches, skipped: [], error }) as AgentStatus['accounts'][number];
    const status = (connected: boolean, accounts: AgentStatus['accounts']): AgentStatus => ({
      connected,
      sessionId: connected ? 's' : undefined,
      accounts,
      operations: { active: 0, pendingResults: 0, running: [] },
    });
    assert.equal(readiness(status(false, [])).reason, 'not connected to the gateway');
    assert.equal(readiness(status(true, [])).ready, true);
    const mixed = readiness(
      status(true, [
        account('a', 'caching', [watch('ConfigMap', true), watch('Secret', false, 'demo')]),
        account('b', 'unknown'),
        account('c', 'standby'),
        account('d', 'refused'),
        account('e', 'caching', [], 'connect ECONNREFUSED'),
        account('f', 'caching', [watch('ConfigMap', true)]),
      ]),
    );
    assert.equal(mixed.ready, false);
    assert.deepEqual(mixed.accounts, {
      ready: 4,
      total: 6,
      pending: [
        { name: 'a', waiting: 'listing', scopes: ['Secret in demo'] },
        { name: 'b', waiting: 'verdict' },
      ],
    });
    assert.equal(mixed.reason, '2 accounts not synced yet: a (listing Secret in demo); b (no verdict from the gateway yet)');
  });
});

describe('agent admin endpoints against the sandbox and the fake gateway', () => {
  test('/health: 503 before the Welcome and while listing (naming the accounts), 200 once synced; /livez always 200', async () => {
    const h = await startHarness({
      seed: 'demo',
      accounts: (kubeconfigFile) => [
        { name: 'sandbox', kubeconfigFile, kinds: ['ConfigMap', 'Deployment'] },
        { name: 'refused-one', kubeconfigFile, kinds: ['ConfigMap'] },
      ],
      // Hold the window at one unacknowledged message: the lists stop right after their START markers.
      gateway: {
        autoAck: false,
        welcome: (hello) => ({
          maxUnacked: 1,
          verdicts: () =>
            hello.accounts.map((a) =>
              a.name === 'refused-one'
                ? { account: a.name, verdict: Verdict.REFUSED, reason: 'bound to another cluster' }
                : { account: a.name },
            ),
        }),
      },
      // The cluster answers nothing yet: the agent cannot prepare its accounts, so it sends no Hello.
      beforeAgent: (sandbox) => sandbox.faults.pause(),
    });
    try {
      const before = await admin(h, '/health');
      assert.equal(before.status, 503);
      assert.deepEqual(
        { status: before.body.status, reason: before.body.reason, connected: before.body.connected, sessionId: before.body.sessionId },
        { status: 'DOWN', reason: 'not connected to the gateway', connected: false, sessionId: null },
      );
      assert.deepEqual((await admin(h, '/livez')).body, { status: 'UP' });
      assert.equal(h.gateway.streams.length, 0, 'no stream yet');

      h.sandbox.faults.resume();
      const listing = await adminUntil(h, '/health', (a) => a.body.connected === true, 'the Welcome');
      assert.equal(listing.status, 503);
      assert.equal(listing.body.status, 'DOWN');
      assert.equal(listing.body.sessionId, 'session-0');
      assert.deepEqual(listing.body.accounts, {
        ready: 1,
        total: 2,
        pending: [{ name: 'sandbox', waiting: 'listing', scopes: ['ConfigMap', 'Deployment'] }],
      });
      assert.match(listing.body.reason, /^1 account not synced yet: sandbox \(listing ConfigMap, Deployment\)$/);
      assert.equal((await admin(h, '/livez')).status, 200);

      // Acknowledge everything from now on: the lists finish.
      h.gateway.autoAck = true;
      h.gateway.streams[0]!.send(
        create(ConnectResponseSchema, { message: { case: 'ack', value: create(AckSchema, { sequence: 1_000_000n }) } }),
      );
      const up = await adminUntil(h, '/health', (a) => a.status === 200, 'readiness');
      assert.deepEqual(up.body, { status: 'UP', connected: true, sessionId: 'session-0', accounts: { ready: 2, total: 2 } });
      // Readiness follows the agent's own state: the END markers may still be on their way to the gateway.
      await eventually(
        'both lists ended',
        () => markersOf(h.gateway.messages).filter((m) => m.account === 'sandbox' && m.phase === SyncPhase.END).length === 2,
        { timeoutMs: 30_000 },
      );

      // A dropped stream makes it unready until the next Welcome.
      h.gateway.streams[0]!.drop();
      await adminUntil(h, '/health', (a) => a.body.sessionId === 'session-1' && a.status === 200, 'ready again on the next session');
    } finally {
      await h.close();
    }
  });

  test('/accounts (filters, paging, 400s), /version, /watches rows, 404 and 405', async () => {
    const h = await startHarness({
      seed: 'demo',
      configFile: true,
      accounts: (kubeconfigFile) => [
        { name: 'team-a', kubeconfigFile, kinds: ['ConfigMap', 'Deployment'], namespaces: ['demo', 'default'] },
        { name: 'team-b', kubeconfigFile, kinds: ['Namespace'] },
        { name: 'other', kubeconfigFile, kinds: ['Namespace'] },
        { name: 'standby-one', kubeconfigFile, kinds: ['Namespace'] },
      ],
      gateway: {
        welcome: (hello) => ({
          verdicts: () =>
            hello.accounts.map((a) =>
              a.name === 'standby-one'
                ? { account: a.name, verdict: Verdict.STANDBY, reason: 'another agent caches it' }
                : { account: a.name },
            ),
        }),
      },
    });
    try {
      await adminUntil(h, '/health', (a) => a.status === 200, 'readiness');
      h.gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'team-dyn', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Namespace'] },
      });
      await adminUntil(h, '/health', (a) => a.status === 200 && a.body.accounts.total === 5, 'the dynamic account synced');

      const all = await admin(h, '/accounts');
      assert.equal(all.status, 200);
      assert.deepEqual(
        { total: all.body.total, limit: all.body.limit, offset: all.body.offset, names: all.body.items.map((a: Json) => a.name) },
        { total: 5, limit: 100, offset: 0, names: ['other', 'standby-one', 'team-a', 'team-b', 'team-dyn'] },
      );
      const teamA = all.body.items.find((a: Json) => a.name === 'team-a');
      assert.deepEqual(
        { source: teamA.source, verdict: teamA.verdict, synced: teamA.synced, watches: teamA.watches },
        {
          source: 'file',
          verdict: 'caching',
          synced: true,
          watches: { total: 4, synced: 4, listing: 0, watching: 4, backoff: 0, stopped: 0 },
        },
      );
      const standby = all.body.items.find((a: Json) => a.name === 'standby-one');
      assert.deepEqual(
        [standby.verdict, standby.reason, standby.synced, standby.watches.total],
        ['standby', 'another agent caches it', false, 0],
      );

      const names = async (query: string) => {
        const answer = await admin(h, `/accounts?${query}`);
        assert.equal(answer.status, 200, `${query}: ${JSON.stringify(answer.body)}`);
        return { total: answer.body.total, names: answer.body.items.map((a: Json) => a.name) };
      };
      assert.deepEqual(await names('name=TEAM'), { total: 3, names: ['team-a', 'team-b', 'team-dyn'] });
      assert.deepEqual(await names('dynamic=true'), { total: 1, names: ['team-dyn'] });
      assert.deepEqual(await names('dynamic=false&name=team'), { total: 2, names: ['team-a', 'team-b'] });
      assert.deepEqual(await names('state=standby'), { total: 1, names: ['standby-one'] });
      assert.deepEqual(await names('state=refused'), { total: 0, names: [] });
      assert.deepEqual(await names('limit=2&offset=1'), { total: 5, names: ['standby-one', 'team-a'] });
      assert.deepEqual(await names('name=team&limit=2&offset=2'), { total: 3, names: ['team-dyn'] });
      assert.deepEqual(await names('offset=10'), { total: 5, names: [] });
      const paged = await admin(h, '/accounts?limit=1000&offset=4');
      assert.deepEqual([paged.body.limit, paged.body.offset, paged.body.items.length], [1000, 4, 1]);

      for (const [query, mentions] of [
        ['limit=0', 'limit'],
        ['limit=1001', 'limit'],
        ['limit=abc', 'limit'],
        ['offset=-1', 'offset'],
        ['dynamic=yes', 'dynamic'],
        ['state=bogus', 'state'],
        ['stat=caching', 'stat'],
        ['limit=1&limit=2', 'limit'],
      ] as const) {
        const bad = await admin(h, `/accounts?${query}`);
        assert.equal(bad.status, 400, query);
        assert.equal(bad.body.error, 'bad_request', query);
        assert.ok(typeof bad.body.message === 'string' && bad.body.message.includes(mentions), `${query}: ${bad.body.message}`);
      }

      const version = await admin(h, '/version');
      assert.deepEqual(version.body, { agentId: 'test-agent', version: packageVersion, node: process.version, configFile: h.configFile });

      // /watches: one row per scope (per namespace for team-a), filters and counts by state.
      const rows = await admin(h, '/watches?account=team-a');
      assert.equal(rows.status, 200);
      assert.deepEqual(rows.body.items.map((r: Json) => `${r.account} ${r.apiVersion} ${r.kind} ${r.namespace} ${r.state}`).sort(), [
        'team-a apps/v1 Deployment default watching',
        'team-a apps/v1 Deployment demo watching',
        'team-a v1 ConfigMap default watching',
        'team-a v1 ConfigMap demo watching',
      ]);
      assert.deepEqual(rows.body.states, { listing: 0, watching: 4, backoff: 0, stopped: 0 });
      const cmDemo = rows.body.items.find((r: Json) => r.kind === 'ConfigMap' && r.namespace === 'demo');
      assert.ok(cmDemo.resourceVersion !== '' && cmDemo.synced === true && !Number.isNaN(Date.parse(cmDemo.startedAt)));
      const end = markersOf(h.gateway.messages).find(
        (m) => m.account === 'team-a' && m.kind === 'ConfigMap' && m.watchNamespace === 'demo' && m.phase === SyncPhase.END,
      )!;
      assert.ok(cmDemo.listed > 0);
      assert.equal(cmDemo.listed, Number(end.count), 'listed count of the scope, as its END marker says');
      const every = await admin(h, '/watches');
      assert.equal(every.body.total, 4 + 3, 'team-a 4 scopes, team-b, other, team-dyn 1 each (standby none)');
      assert.deepEqual([...new Set(every.body.items.map((r: Json) => r.account))], ['other', 'team-a', 'team-b', 'team-dyn']);
      assert.equal((await admin(h, '/watches?state=listing')).body.total, 0);
      assert.equal((await admin(h, '/watches?state=watching&limit=2')).body.items.length, 2);
      assert.equal((await admin(h, '/watches?account=nobody')).body.total, 0);
      assert.equal((await admin(h, '/watches?state=sleeping')).status, 400);

      // /status is still the whole snapshot.
      const status = await admin(h, '/status');
      assert.equal(status.body.accounts.length, 5);
      assert.equal(status.body.connected, true);

      const missing = await admin(h, '/nope');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error, 'not_found');
      const post = await admin(h, '/accounts', 'POST');
      assert.equal(post.status, 405);
      assert.equal(post.body.error, 'method_not_allowed');
      assert.equal(post.headers.get('allow'), 'GET, HEAD');
      assert.equal((await admin(h, '/health', 'DELETE')).status, 405);
    } finally {
      await h.close();
    }
  });

  test('/operations lists what runs now: a running operation, one waiting for a slot, elapsed time; empty once done', async () => {
    const h = await startHarness({ seed: 'demo', account: { kinds: ['Namespace'] }, config: { operations: { concurrency: 1 } } });
    try {
      await adminUntil(h, '/health', (a) => a.status === 200, 'readiness');
      assert.deepEqual((await admin(h, '/operations')).body, { items: [], total: 0, pendingResults: 0 });
      // The cluster stops answering: the first operation's Kubernetes call hangs, the second waits for the only slot.
      h.sandbox.faults.pause();
      const get = { case: 'get', value: { kind: 'ConfigMap', namespace: 'demo', name: 'web-config' } as never } as const;
      h.gateway.sendOperation(create(OperationSchema, { id: 'slow-get', account: 'sandbox', timeout: durationFromMs(20_000), spec: get }));
      h.gateway.sendOperation(
        create(OperationSchema, {
          id: 'queued-scale',
          account: 'sandbox',
          timeout: durationFromMs(20_000),
          spec: { case: 'scale', value: { kind: 'Deployment', namespace: 'demo', name: 'web', replicas: 2 } as never },
        }),
      );
      const first = await adminUntil(h, '/operations', (a) => a.body.total === 2, 'two operations held');
      const [running, waiting] = first.body.items as Json[];
      assert.deepEqual([running.id, running.account, running.kind, running.state], ['slow-get', 'sandbox', 'get', 'running']);
      assert.deepEqual([waiting.id, waiting.kind, waiting.state], ['queued-scale', 'scale', 'waiting']);
      assert.ok(Math.abs(Date.parse(running.startedAt) - Date.now()) < 120_000, `started ${running.startedAt}: a date, and a recent one`);
      await new Promise((r) => setTimeout(r, 150));
      const later = await admin(h, '/operations?account=sandbox');
      assert.ok(
        later.body.items[0].elapsedMs >= running.elapsedMs + 100,
        `elapsed grows: ${running.elapsedMs} → ${later.body.items[0].elapsedMs}`,
      );
      assert.equal((await admin(h, '/operations?account=other')).body.total, 0);
      assert.equal((await admin(h, '/operations?kind=get')).status, 400);

      h.sandbox.faults.resume();
      assert.equal((await h.gateway.waitForResult('slow-get', 30_000)).success, true);
      await h.gateway.waitForResult('queued-scale', 30_000);
      await adminUntil(h, '/operations', (a) => a.body.total === 0, 'no operation held any more');
    } finally {
      await h.close();
    }
  });
});
