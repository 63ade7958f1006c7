import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AccountAction, SyncPhase, Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { eventsOf, markersOf, startHarness, type Harness } from './helpers/harness.js';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ends = (h: Harness, account: string, kind: string) =>
  markersOf(h.gateway.messages).filter((m) => m.account === account && m.kind === kind && m.phase === SyncPhase.END);
const accountOf = (h: Harness, name: string) => h.agent.status().accounts.find((a) => a.name === name);
const service = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'demo' },
  spec: { ports: [{ port: 80 }] },
});

describe('dynamic accounts (gateway AccountCommands)', () => {
  test('ADD prepares, announces and streams after CACHING; REMOVE stops it; the file wins; invalid and refused ones are logged', async () => {
    const h = await startHarness({
      seed: 'demo',
      account: { kinds: ['ConfigMap'] },
      gateway: {
        verdicts: (change) =>
          change.added.map((a) =>
            a.name === 'taken'
              ? { account: a.name, verdict: Verdict.REFUSED, reason: 'name "taken" is bound to another cluster' }
              : { account: a.name },
          ),
      },
    });
    try {
      const { gateway, sandbox } = h;
      await gateway.waitFor(() => ends(h, 'sandbox', 'ConfigMap').length === 1, 10_000, 'file account listed');
      const fileWatchStarted = accountOf(h, 'sandbox')!.watches[0]!.startedAt;

      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: {
          name: 'dyn',
          kubeconfigFile: h.kubeconfigFile,
          context: 'sandbox',
          kinds: ['Service'],
          namespaces: ['demo'],
          properties: { team: 'web' },
        },
      });
      const change = await gateway.waitFor(() => gateway.accountsChanged()[0], 5000, 'AccountsChanged for dyn');
      assert.deepEqual(change.removed, []);
      assert.equal(change.added[0]!.name, 'dyn');
      assert.equal(change.added[0]!.apiHost, sandbox.url);
      assert.deepEqual(change.added[0]!.namespaces, ['demo']);
      assert.deepEqual(change.added[0]!.properties, { team: 'web' });
      await gateway.waitFor(() => ends(h, 'dyn', 'Service').length === 1, 5000, 'dyn listed');
      sandbox.store.create(service('dyn-live'));
      await gateway.waitFor(
        () => eventsOf(gateway.messages).find((e) => e.account === 'dyn' && e.name === 'dyn-live'),
        5000,
        'dyn streams changes',
      );
      assert.deepEqual(
        { source: accountOf(h, 'dyn')!.source, verdict: accountOf(h, 'dyn')!.verdict },
        { source: 'dynamic', verdict: 'caching' },
      );
      const admin = (await (await fetch(`http://127.0.0.1:${h.agent.adminPort}/accounts`)).json()) as {
        items: Array<{ name: string; source: string; verdict: string }>;
      };
      assert.deepEqual(
        admin.items.map((a) => [a.name, a.source, a.verdict]),
        [
          ['dyn', 'dynamic', 'caching'],
          ['sandbox', 'file', 'caching'],
        ],
      );

      // The file wins; invalid definitions are refused; neither is announced.
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'sandbox', kubeconfigFile: h.kubeconfigFile, kinds: ['Service'] },
      });
      gateway.sendAccountCommand({ action: AccountAction.ADD, account: { name: 'no-creds', kinds: ['Service'] } });
      gateway.sendAccountCommand({ action: AccountAction.ADD, account: { name: 'Bad Name', serviceAccount: true } });
      gateway.sendAccountCommand({ action: AccountAction.REMOVE, account: { name: 'sandbox' } });
      await gateway.waitFor(
        () => (h.logs.text().match(/config file/g)?.length ?? 0) >= 2 && /"Bad Name"/.test(h.logs.text()),
        5000,
        'warnings',
      );
      const text = h.logs.text();
      assert.match(text, /ignoring ADD of account \\"sandbox\\": the config file defines an account of that name \(the file wins\)/);
      assert.match(
        text,
        /refusing to add account \\"no-creds\\" from a gateway command: invalid definition: kubeconfigFile: set kubeconfigFile/,
      );
      assert.match(text, /refusing to add account \\"Bad Name\\" from a gateway command: invalid definition: name: account names are/);
      assert.match(text, /ignoring REMOVE of account \\"sandbox\\": it is defined in the config file/);
      await pause(200);
      assert.equal(gateway.accountsChanged().length, 1);
      assert.equal(accountOf(h, 'sandbox')!.watches[0]!.startedAt, fileWatchStarted, 'the file account was not touched');

      // A refused account is not streamed, and the reason is logged and shown.
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'taken', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Service'] },
      });
      await gateway.waitFor(() => accountOf(h, 'taken')?.verdict === 'refused', 5000, 'taken refused');
      assert.equal(accountOf(h, 'taken')!.reason, 'name "taken" is bound to another cluster');
      assert.match(h.logs.text(), /account refused by the gateway: name \\"taken\\" is bound to another cluster/);
      await pause(200);
      assert.equal(
        markersOf(gateway.messages).some((m) => m.account === 'taken'),
        false,
      );

      // REMOVE: watchers stop; nothing of dyn after its removal is announced.
      gateway.sendAccountCommand({ action: AccountAction.REMOVE, account: { name: 'dyn' } });
      const removal = await gateway.waitFor(
        () => gateway.accountsChanged().find((c) => c.removed.includes('dyn')),
        5000,
        'removal announced',
      );
      assert.deepEqual(removal.added, []);
      const announcedAt = gateway.streams[0]!.messages.findIndex(
        (m) => m.message.case === 'accountsChanged' && m.message.value === removal,
      );
      sandbox.store.create(service('after-removal'));
      await gateway.waitFor(() => accountOf(h, 'dyn') === undefined, 5000, 'dyn gone from the status');
      await pause(300);
      assert.equal(
        eventsOf(gateway.streams[0]!.messages.slice(announcedAt + 1)).some((e) => e.account === 'dyn'),
        false,
      );
      assert.equal(
        eventsOf(gateway.messages).some((e) => e.name === 'after-removal'),
        false,
        'no account watches Services any more',
      );
      assert.equal(gateway.streams.length, 1);
    } finally {
      await h.close();
    }
  });

  test('dynamic accounts survive reconnects (re-announced in the Hello); ADD for an existing one replaces it', async () => {
    const h = await startHarness({ seed: 'demo', account: { kinds: ['ConfigMap'] } });
    try {
      const { gateway } = h;
      await gateway.waitFor(() => h.agent.status().connected, 5000, 'welcome');
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'dyn', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Service'] },
      });
      await gateway.waitFor(() => ends(h, 'dyn', 'Service').length === 1, 5000, 'dyn listed');

      // Same definition again while CACHING: nothing to do.
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'dyn', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Service'] },
      });
      await gateway.waitFor(() => /already served with this definition/.test(h.logs.text()), 5000, 'duplicate ADD noticed');
      // A different definition: removed and added in one change.
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'dyn', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Service', 'Deployment'] },
      });
      const replaced = await gateway.waitFor(() => gateway.accountsChanged()[1], 5000, 'replacement');
      assert.deepEqual(replaced.removed, ['dyn']);
      assert.deepEqual(
        replaced.added.map((a) => a.name),
        ['dyn'],
      );
      await gateway.waitFor(() => ends(h, 'dyn', 'Deployment').length === 1, 5000, 'dyn Deployments listed');

      gateway.streams[0]!.drop();
      await gateway.waitFor(() => h.agent.status().sessionId === 'session-1', 5000, 'second session');
      assert.deepEqual(
        gateway.streams[1]!.hello!.accounts.map((a) => a.name),
        ['sandbox', 'dyn'],
      );
      await gateway.waitFor(() => ends(h, 'dyn', 'Deployment').length === 2, 5000, 'dyn streams in the new session');
      assert.equal(accountOf(h, 'dyn')!.source, 'dynamic');
    } finally {
      await h.close();
    }
  });

  test('resume points in AccountVerdicts apply: the added account resumes its watch without a list', async () => {
    let resumeRv = '';
    const h = await startHarness({
      seed: 'demo',
      account: { kinds: ['ConfigMap'] },
      gateway: {
        verdicts: (change) =>
          change.added.map((a) => ({
            account: a.name,
            resume: a.kinds.map((k) => ({
              apiVersion: k.apiVersion,
              kind: k.kind,
              watchNamespace: '',
              resourceVersion: resumeRv,
              $typeName: 'outpost.agent.v1.ResumePoint' as const,
            })),
          })),
      },
    });
    try {
      const { gateway, sandbox } = h;
      await gateway.waitFor(() => h.agent.status().connected, 5000, 'welcome');
      resumeRv = String(sandbox.store.resourceVersion);
      sandbox.store.create(service('made-after-resume-point'));
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'resumed', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Service'] },
      });
      const added = await gateway.waitFor(
        () => eventsOf(gateway.messages).find((e) => e.account === 'resumed' && e.name === 'made-after-resume-point'),
        5000,
        'change since the resume point',
      );
      assert.equal(added.watchNamespace, '');
      await pause(200);
      assert.equal(
        markersOf(gateway.messages).some((m) => m.account === 'resumed'),
        false,
        'no list for a resumed scope',
      );
      assert.equal(
        eventsOf(gateway.messages).some((e) => e.account === 'resumed' && e.name === 'web'),
        false,
        'older objects not re-sent',
      );
    } finally {
      await h.close();
    }
  });

  test('removing an account whose watchers wait on a full window does not wait for acks', async () => {
    const h = await startHarness({
      seed: { scale: 2000 },
      account: { kinds: ['ConfigMap'] },
      gateway: { autoAck: false, welcome: () => ({ maxUnacked: 2 }) },
    });
    try {
      const { gateway } = h;
      await gateway.waitFor(() => h.agent.status().connected, 5000, 'welcome');
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'blocked', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['ConfigMap'] },
      });
      await gateway.waitFor(
        () => h.agent.status().accounts.find((a) => a.name === 'blocked')?.watches[0]?.state === 'listing',
        5000,
        'blocked listing',
      );
      await pause(200);
      gateway.sendAccountCommand({ action: AccountAction.REMOVE, account: { name: 'blocked' } });
      await gateway.waitFor(() => gateway.accountsChanged().find((c) => c.removed.includes('blocked')), 3000, 'removal announced');
      await gateway.waitFor(() => /removing dynamic account/.test(h.logs.text()), 1000, 'removal logged');
      // The manager is free again: the next command is applied at once although nothing was acknowledged.
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'next', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Service'] },
      });
      await gateway.waitFor(
        () => gateway.accountsChanged().find((c) => c.added.some((a) => a.name === 'next')),
        3000,
        'next change announced',
      );
      assert.equal(
        h.agent.status().accounts.some((a) => a.name === 'blocked'),
        false,
      );
    } finally {
      await h.close();
    }
  });
});
