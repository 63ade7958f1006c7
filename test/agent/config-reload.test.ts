import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, markersOf, startHarness, type Harness } from './helpers/harness.js';
import { Code } from '@connectrpc/connect';
import { SyncPhase } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { eventually } from '../../testkit/eventually.js';

const configMap = (name: string, namespace: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: {} });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** END markers of one account and kind. */
const ends = (h: Harness, account: string, kind: string) =>
  markersOf(h.gateway.messages).filter((m) => m.account === account && m.kind === kind && m.phase === SyncPhase.END);
const accountOf = (h: Harness, name: string) => h.agent.status().accounts.find((a) => a.name === name);

describe('agent config file reload', () => {
  test('accounts added, removed and changed in the file take effect within seconds; untouched accounts keep their watch', async () => {
    const h = await startHarness({
      seed: 'demo',
      configFile: true,
      accounts: (kubeconfigFile) => [
        { name: 'alpha', kubeconfigFile, context: 'sandbox', kinds: ['ConfigMap'], namespaces: ['demo'] },
        { name: 'beta', kubeconfigFile, context: 'sandbox', kinds: ['ConfigMap'], namespaces: ['default'] },
      ],
    });
    try {
      const { gateway, sandbox } = h;
      await eventually('first lists', () => ends(h, 'alpha', 'ConfigMap').length === 1 && ends(h, 'beta', 'ConfigMap').length === 1, {
        timeoutMs: 30_000,
      });
      await eventually('beta watching', () => accountOf(h, 'beta')?.watches[0]?.state === 'watching', { timeoutMs: 30_000 });
      const betaWatch = accountOf(h, 'beta')!.watches[0]!;
      const betaMarkers = markersOf(gateway.messages).filter((m) => m.account === 'beta').length;
      assert.deepEqual(
        h.agent.status().accounts.map((a) => [a.name, a.source, a.verdict]),
        [
          ['alpha', 'file', 'caching'],
          ['beta', 'file', 'caching'],
        ],
      );

      // Remove alpha, add gamma (Services in demo); beta untouched.
      const raw = structuredClone(h.rawConfig) as { kubernetes: { accounts: Record<string, unknown>[] } };
      const [alpha, beta] = raw.kubernetes.accounts;
      const gamma = { ...alpha, name: 'gamma', kinds: ['Service'] };
      raw.kubernetes.accounts = [beta!, gamma];
      h.writeConfig(raw);
      const change = await eventually('AccountsChanged', () => gateway.accountsChanged()[0], { timeoutMs: 30_000 });
      assert.deepEqual(change.removed, ['alpha']);
      assert.deepEqual(
        change.added.map((a) => a.name),
        ['gamma'],
      );
      assert.equal(change.added[0]!.apiHost, sandbox.url, 'the added account is prepared before it is announced');
      assert.ok(change.added[0]!.kinds.some((k) => k.kind === 'Service'));
      await eventually('gamma listed after its CACHING verdict', () => ends(h, 'gamma', 'Service').length === 1, { timeoutMs: 30_000 });
      assert.ok(
        eventsOf(gateway.messages).some((e) => e.account === 'gamma' && e.name === 'web'),
        'gamma streams its objects',
      );
      const announcedAt = gateway.streams[0]!.messages.findIndex((m) => m.message.case === 'accountsChanged');
      const gammaFirst = gateway.streams[0]!.messages.findIndex((m) => m.message.case === 'sync' && m.message.value.account === 'gamma');
      assert.ok(gammaFirst > announcedAt, 'gamma streams only after its announcement');

      // alpha's watch is gone: its namespace's changes are not sent; beta's watch still runs, never restarted.
      sandbox.store.create(configMap('after-reload-demo', 'demo'));
      sandbox.store.create(configMap('after-reload-default', 'default'));
      await eventually(
        'beta event',
        () => eventsOf(gateway.messages).find((e) => e.account === 'beta' && e.name === 'after-reload-default'),
        { timeoutMs: 30_000 },
      );
      await pause(200);
      const afterAnnouncement = gateway.streams[0]!.messages.slice(announcedAt + 1);
      assert.equal(
        eventsOf(afterAnnouncement).some((e) => e.account === 'alpha'),
        false,
        'nothing of alpha after its removal',
      );
      assert.equal(markersOf(gateway.messages).filter((m) => m.account === 'beta').length, betaMarkers, 'beta not re-listed');
      assert.equal(accountOf(h, 'beta')!.watches[0]!.startedAt, betaWatch.startedAt, 'beta watch not restarted');
      assert.equal(accountOf(h, 'alpha'), undefined);
      assert.equal(gateway.streams.length, 1, 'same stream throughout');

      // Change gamma (one more kind): announced as removed + added, re-listed; beta still untouched.
      raw.kubernetes.accounts = [beta!, { ...gamma, kinds: ['Service', 'ConfigMap'] }];
      h.writeConfig(raw);
      const second = await eventually('second AccountsChanged', () => gateway.accountsChanged()[1], { timeoutMs: 30_000 });
      assert.deepEqual(second.removed, ['gamma']);
      assert.deepEqual(
        second.added.map((a) => a.name),
        ['gamma'],
      );
      assert.ok(second.changeId > change.changeId);
      await eventually('gamma re-listed', () => ends(h, 'gamma', 'ConfigMap').length === 1 && ends(h, 'gamma', 'Service').length === 2, {
        timeoutMs: 30_000,
      });
      assert.equal(accountOf(h, 'beta')!.watches[0]!.startedAt, betaWatch.startedAt, 'beta watch still not restarted');

      // An invalid file is logged and the running accounts stay.
      h.writeConfig({ ...raw, kubernetes: { accounts: [{ name: 'Bad Name', serviceAccount: true }] } });
      await eventually(
        'invalid file logged',
        () => /the configuration file changed but is invalid; keeping the running configuration/.test(h.logs.text()),
        { timeoutMs: 30_000 },
      );
      assert.match(h.logs.text(), /kubernetes\.accounts\[0\]\.name/);
      await pause(400);
      assert.equal(gateway.accountsChanged().length, 2);
      assert.deepEqual(
        h.agent.status().accounts.map((a) => a.name),
        ['beta', 'gamma'],
      );

      // Other settings: logged as needing a restart; accounts unchanged → nothing announced.
      h.writeConfig({ ...raw, operations: { concurrency: 3 } });
      await eventually('restart warning', () => /operations take effect only after a restart/.test(h.logs.text()), { timeoutMs: 30_000 });
      await pause(300);
      assert.equal(gateway.accountsChanged().length, 2);
      assert.equal(accountOf(h, 'beta')!.watches[0]!.startedAt, betaWatch.startedAt);
    } finally {
      await h.close();
    }
  });

  test('a change made while disconnected goes into the next Hello', async () => {
    let open = true;
    const h = await startHarness({
      seed: 'none',
      configFile: true,
      account: { kinds: ['ConfigMap'] },
      gateway: { welcome: () => (open ? {} : { refuse: { code: Code.Unavailable, message: 'down for maintenance' } }) },
    });
    try {
      const { gateway } = h;
      await eventually('welcome', () => h.agent.status().connected, { timeoutMs: 30_000 });
      open = false;
      gateway.streams[0]!.drop();
      await eventually('refused reconnects', () => gateway.streams.length >= 3 && !h.agent.status().connected, { timeoutMs: 30_000 });
      const raw = structuredClone(h.rawConfig) as { kubernetes: { accounts: Record<string, unknown>[] } };
      raw.kubernetes.accounts.push({ ...raw.kubernetes.accounts[0], name: 'later' });
      h.writeConfig(raw);
      await eventually('account added while disconnected', () => h.agent.status().accounts.some((a) => a.name === 'later'), {
        timeoutMs: 30_000,
      });
      const refusedSoFar = gateway.streams.length;
      open = true;
      await eventually('welcomed again', () => h.agent.status().connected, { timeoutMs: 30_000 });
      const welcomed = gateway.streams.slice(refusedSoFar).find((s) => s.hello !== undefined)!;
      assert.deepEqual(
        welcomed.hello!.accounts.map((a) => a.name),
        ['sandbox', 'later'],
      );
      await eventually('later caching', () => h.agent.status().accounts.find((a) => a.name === 'later')?.verdict === 'caching', {
        timeoutMs: 30_000,
      });
      assert.match(h.logs.text(), /configuration file reloaded: applying account changes/);
    } finally {
      await h.close();
    }
  });
});
