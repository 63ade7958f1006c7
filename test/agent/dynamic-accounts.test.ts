import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AccountAction, SyncPhase, Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { eventsOf, markersOf, startHarness, type Harness } from './helpers/harness.js';
import { eventually } from '../../testkit/eventually.js';

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
      await eventually('file account listed', () => ends(h, 'sandbox', 'ConfigMap').length === 1, { timeoutMs: 30_000 });
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
      const change = await eventually('AccountsChanged for dyn', () => gateway.accountsChanged()[0], { timeoutMs: 30_000 });
      assert.deepEqual(change.removed, []);
      assert.equal(change.added[0]!.name, 'dyn');
      assert.equal(change.added[0]!.apiHost, sandbox.url);
      assert.deepEqual(change.added[0]!.namespaces, ['demo']);
      assert.deepEqual(change.added[0]!.properties, { team: 'web' });
      await eventually('dyn listed', () => ends(h, 'dyn', 'Service').length === 1, { timeoutMs: 30_000 });
      sandbox.store.create(service('dyn-live'));
      await eventually('dyn streams changes', () => eventsOf(gateway.messages).find((e) => e.account === 'dyn' && e.name === 'dyn-live'), {
        timeoutMs: 30_000,
      });
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
      await eventually('warnings', () => (h.logs.text().match(/config file/g)?.length ?? 0) >= 2 && /"Bad Name"/.test(h.logs.text()), {
        timeoutMs: 30_000,
      });
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
      await eventually('taken refused', () => accountOf(h, 'taken')?.verdict === 'refused', { timeoutMs: 30_000 });
      assert.equal(accountOf(h, 'taken')!.reason, 'name "taken" is bound to another cluster');
      assert.match(h.logs.text(), /account refused by the gateway: name \\"taken\\" is bound to another cluster/);
      await pause(200);
      assert.equal(
        markersOf(gateway.messages).some((m) => m.account === 'taken'),
        false,
      );

      // REMOVE: watchers stop; nothing of dyn after its removal is announced.
      gateway.sendAccountCommand({ action: AccountAction.REMOVE, account: { name: 'dyn' } });
      const removal = await eventually('removal announced', () => gateway.accountsChanged().find((c) => c.removed.includes('dyn')), {
        timeoutMs: 30_000,
      });
      assert.deepEqual(removal.added, []);
      const announcedAt = gateway.streams[0]!.messages.findIndex(
        (m) => m.message.case === 'accountsChanged' && m.message.value === removal,
      );
      sandbox.store.create(service('after-removal'));
      await eventually('dyn gone from the status', () => accountOf(h, 'dyn') === undefined, { timeoutMs: 30_000 });
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
      await eventually('welcome', () => h.agent.status().connected, { timeoutMs: 30_000 });
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'dyn', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Service'] },
      });
      await eventually('dyn listed', () => ends(h, 'dyn', 'Service').length === 1, { timeoutMs: 30_000 });

      // Same definition again while CACHING: nothing to do.
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'dyn', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Service'] },
      });
      await eventually('duplicate ADD noticed', () => /already served with this definition/.test(h.logs.text()), { timeoutMs: 30_000 });
      // A different definition: removed and added in one change.
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'dyn', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Service', 'Deployment'] },
      });
      const replaced = await eventually('replacement', () => gateway.accountsChanged()[1], { timeoutMs: 30_000 });
      assert.deepEqual(replaced.removed, ['dyn']);
      assert.deepEqual(
        replaced.added.map((a) => a.name),
        ['dyn'],
      );
      await eventually('dyn Deployments listed', () => ends(h, 'dyn', 'Deployment').length === 1, { timeoutMs: 30_000 });

      gateway.streams[0]!.drop();
      await eventually('second session', () => h.agent.status().sessionId === 'session-1', { timeoutMs: 30_000 });
      assert.deepEqual(
        gateway.streams[1]!.hello!.accounts.map((a) => a.name),
        ['sandbox', 'dyn'],
      );
      await eventually('dyn streams in the new session', () => ends(h, 'dyn', 'Deployment').length === 2, { timeoutMs: 30_000 });
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
      await eventually('welcome', () => h.agent.status().connected, { timeoutMs: 30_000 });
      resumeRv = String(sandbox.store.resourceVersion);
      sandbox.store.create(service('made-after-resume-point'));
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'resumed', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Service'] },
      });
      const added = await eventually(
        'change since the resume point',
        () => eventsOf(gateway.messages).find((e) => e.account === 'resumed' && e.name === 'made-after-resume-point'),
        { timeoutMs: 30_000 },
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
      await eventually('welcome', () => h.agent.status().connected, { timeoutMs: 30_000 });
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'blocked', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['ConfigMap'] },
      });
      await eventually(
        'blocked listing',
        () => h.agent.status().accounts.find((a) => a.name === 'blocked')?.watches[0]?.state === 'listing',
        { timeoutMs: 30_000 },
      );
      await pause(200);
      gateway.sendAccountCommand({ action: AccountAction.REMOVE, account: { name: 'blocked' } });
      await eventually('removal announced', () => gateway.accountsChanged().find((c) => c.removed.includes('blocked')), {
        timeoutMs: 30_000,
      });
      await eventually('removal logged', () => /removing dynamic account/.test(h.logs.text()), { timeoutMs: 30_000 });
      // The manager is free again: the next command is applied at once although nothing was acknowledged.
      gateway.sendAccountCommand({
        action: AccountAction.ADD,
        account: { name: 'next', kubeconfigFile: h.kubeconfigFile, context: 'sandbox', kinds: ['Service'] },
      });
      await eventually('next change announced', () => gateway.accountsChanged().find((c) => c.added.some((a) => a.name === 'next')), {
        timeoutMs: 30_000,
      });
      assert.equal(
        h.agent.status().accounts.some((a) => a.name === 'blocked'),
        false,
      );
    } finally {
      await h.close();
    }
  });
});
