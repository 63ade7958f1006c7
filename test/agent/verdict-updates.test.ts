import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { create } from '@bufbuild/protobuf';
import { durationFromMs } from '@bufbuild/protobuf/wkt';
import { ResumePointSchema, SyncPhase, Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { OperationSchema } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { dataMessages } from './helpers/fake-gateway.js';
import { eventsOf, markersOf, startHarness, type Harness } from './helpers/harness.js';
import { eventually } from '../../testkit/eventually.js';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'demo' }, data: { a: '1' } });
const accountOf = (h: Harness) => h.agent.status().accounts.find((a) => a.name === 'sandbox')!;
const markers = (h: Harness, kind: string, phase: SyncPhase) =>
  markersOf(h.gateway.messages).filter((m) => m.kind === kind && m.phase === phase);
const arrived = (h: Harness, name: string) => eventsOf(h.gateway.messages).find((e) => e.account === 'sandbox' && e.name === name);
const configMapResume = (resourceVersion: string) => [
  create(ResumePointSchema, { apiVersion: 'v1', kind: 'ConfigMap', watchNamespace: '', resourceVersion }),
];

/** An agent with one account watching ConfigMaps and Services, welcomed with `verdict`. */
function startWith(verdict: Verdict): Promise<Harness> {
  return startHarness({
    seed: 'demo',
    account: { kinds: ['ConfigMap', 'Service'] },
    gateway: { welcome: () => ({ verdicts: (hello) => hello.accounts.map((a) => ({ account: a.name, verdict, reason: 'initial' })) }) },
  });
}

describe('verdict updates pushed by the gateway (AccountVerdicts with change_id 0)', () => {
  test('a STANDBY account promoted to CACHING streams: resumed scopes watch without a list, the others list; a repeated promotion restarts nothing', async () => {
    const h = await startWith(Verdict.STANDBY);
    try {
      const { gateway, sandbox } = h;
      await eventually('welcomed as standby', () => h.agent.status().connected && accountOf(h).verdict === 'standby', {
        timeoutMs: 30_000,
      });
      await pause(300);
      assert.equal(dataMessages(gateway.messages).length, 0, 'a standby account sends nothing');
      assert.deepEqual(accountOf(h).watches, []);

      const resumeRv = String(sandbox.store.resourceVersion);
      sandbox.store.create(configMap('made-while-standby'));
      gateway.sendVerdicts([
        { account: 'sandbox', verdict: Verdict.CACHING, reason: 'the caching agent died', resume: configMapResume(resumeRv) },
      ]);

      await eventually('Services listed', () => markers(h, 'Service', SyncPhase.END).length === 1, { timeoutMs: 30_000 });
      assert.equal(markers(h, 'Service', SyncPhase.START).length, 1, 'the scope without a resume point lists');
      const resumed = await eventually('the change since the resume point', () => arrived(h, 'made-while-standby'), { timeoutMs: 30_000 });
      assert.equal(resumed.kind, 'ConfigMap');
      sandbox.store.create(configMap('made-after-promotion'));
      await eventually('a change after the promotion', () => arrived(h, 'made-after-promotion'), { timeoutMs: 30_000 });
      assert.equal(
        markersOf(gateway.messages).some((m) => m.kind === 'ConfigMap'),
        false,
        'no list (no sync markers) for the resumed scope',
      );
      assert.equal(arrived(h, 'web-config'), undefined, 'objects older than the resume point are not re-sent');
      assert.deepEqual(
        { verdict: accountOf(h).verdict, reason: accountOf(h).reason },
        { verdict: 'caching', reason: 'the caching agent died' },
      );
      const promoted = h.logs.lines().find((l) => l.msg === 'account promoted to caching by the gateway');
      assert.ok(promoted, 'the promotion is logged');
      assert.deepEqual(
        [promoted.level, promoted.account, promoted.reason, promoted.resumePoints],
        [30, 'sandbox', 'the caching agent died', 1],
      );

      // The same push again: already streaming, nothing restarts.
      const startedAt = accountOf(h).watches.map((w) => w.startedAt);
      const startMarkers = markers(h, 'Service', SyncPhase.START).length + markers(h, 'ConfigMap', SyncPhase.START).length;
      gateway.sendVerdicts([
        { account: 'sandbox', verdict: Verdict.CACHING, reason: 'the caching agent died', resume: configMapResume(resumeRv) },
      ]);
      await pause(400);
      assert.equal(
        markers(h, 'Service', SyncPhase.START).length + markers(h, 'ConfigMap', SyncPhase.START).length,
        startMarkers,
        'no new list',
      );
      assert.deepEqual(
        accountOf(h).watches.map((w) => w.startedAt),
        startedAt,
        'the watchers were not restarted',
      );
      assert.equal(
        eventsOf(gateway.messages).filter((e) => e.name === 'made-while-standby').length,
        1,
        'nothing re-sent from the resume point',
      );
      sandbox.store.create(configMap('made-after-second-push'));
      await eventually('still streaming', () => arrived(h, 'made-after-second-push'), { timeoutMs: 30_000 });
      assert.equal(gateway.streams.length, 1);
    } finally {
      await h.close();
    }
  });

  test('STANDBY pushed for a caching account stops its events and shows standby (operations still run); REFUSED too; a later promotion lists again', async () => {
    const h = await startWith(Verdict.CACHING);
    try {
      const { gateway, sandbox } = h;
      await eventually(
        'initial lists',
        () => markers(h, 'ConfigMap', SyncPhase.END).length === 1 && markers(h, 'Service', SyncPhase.END).length === 1,
        { timeoutMs: 30_000 },
      );
      sandbox.store.create(configMap('before-demotion'));
      await eventually('streaming', () => arrived(h, 'before-demotion'), { timeoutMs: 30_000 });

      gateway.sendVerdicts([{ account: 'sandbox', verdict: Verdict.STANDBY, reason: 'another agent caches it' }]);
      await eventually('standby', () => accountOf(h).verdict === 'standby', { timeoutMs: 30_000 });
      const demotedAt = gateway.messages.length;
      sandbox.store.create(configMap('after-demotion'));
      await pause(500);
      assert.equal(arrived(h, 'after-demotion'), undefined, 'no event after the demotion');
      assert.equal(dataMessages(gateway.messages.slice(demotedAt)).length, 0, 'nothing of the account is sent any more');
      assert.equal(accountOf(h).reason, 'another agent caches it');
      assert.deepEqual(accountOf(h).watches, []);
      const admin = (await (await fetch(`http://127.0.0.1:${h.agent.adminPort}/accounts`)).json()) as {
        items: Array<{ name: string; verdict: string; reason?: string }>;
      };
      assert.deepEqual(
        admin.items.map((a) => [a.name, a.verdict, a.reason]),
        [['sandbox', 'standby', 'another agent caches it']],
      );
      const demoted = h.logs.lines().find((l) => l.msg === 'account demoted to standby by the gateway: not streaming');
      assert.ok(demoted && demoted.level === 30 && demoted.reason === 'another agent caches it', 'the demotion is logged at info');

      // A standby account still runs operations.
      h.gateway.sendOperation(
        create(OperationSchema, {
          id: 'get-while-standby',
          account: 'sandbox',
          timeout: durationFromMs(30_000),
          spec: { case: 'get', value: { kind: 'ConfigMap', namespace: 'demo', name: 'after-demotion' } as never },
        }),
      );
      const result = await gateway.waitForResult('get-while-standby', 30_000);
      assert.equal(result.success, true, `${result.statusCode} ${result.reason}: ${result.message}`);

      // REFUSED: recorded with its reason and logged at warn.
      gateway.sendVerdicts([{ account: 'sandbox', verdict: Verdict.REFUSED, reason: 'name bound to another cluster' }]);
      await eventually('refused', () => accountOf(h).verdict === 'refused', { timeoutMs: 30_000 });
      assert.equal(accountOf(h).reason, 'name bound to another cluster');
      const refused = h.logs
        .lines()
        .find((l) => l.level === 40 && /account refused by the gateway: name bound to another cluster/.test(String(l.msg)));
      assert.ok(refused, 'the refusal is logged at warn');

      // Promoted again without resume points: every scope lists again.
      gateway.sendVerdicts([{ account: 'sandbox', verdict: Verdict.CACHING }]);
      await eventually(
        'listed again',
        () => markers(h, 'ConfigMap', SyncPhase.END).length === 2 && markers(h, 'Service', SyncPhase.END).length === 2,
        { timeoutMs: 30_000 },
      );
      assert.ok(arrived(h, 'after-demotion'), 'the re-list sends what changed while not caching');
      assert.equal(accountOf(h).verdict, 'caching');
      assert.equal(gateway.streams.length, 1);
    } finally {
      await h.close();
    }
  });

  test('pushed verdicts naming unknown accounts are ignored without ending the stream', async () => {
    const h = await startWith(Verdict.STANDBY);
    try {
      const { gateway } = h;
      await eventually('welcomed as standby', () => h.agent.status().connected && accountOf(h).verdict === 'standby', {
        timeoutMs: 30_000,
      });
      gateway.sendVerdicts([
        { account: 'nope', verdict: Verdict.CACHING },
        { account: 'other', verdict: Verdict.STANDBY },
      ]);
      await eventually(
        'unknown accounts logged',
        () => h.logs.lines().filter((l) => l.msg === 'ignoring a pushed verdict for an account this session does not know').length === 2,
        { timeoutMs: 30_000 },
      );
      await pause(300);
      assert.equal(dataMessages(gateway.messages).length, 0);
      assert.equal(accountOf(h).verdict, 'standby');
      assert.equal(h.agent.status().connected, true);
      assert.equal(gateway.streams.length, 1);
      assert.equal(gateway.streams[0]!.ended, false);

      // The stream still works: a mixed push applies its known entry.
      gateway.sendVerdicts([
        { account: 'nope', verdict: Verdict.REFUSED },
        { account: 'sandbox', verdict: Verdict.CACHING },
      ]);
      await eventually(
        'promoted and listed',
        () => markers(h, 'ConfigMap', SyncPhase.END).length === 1 && markers(h, 'Service', SyncPhase.END).length === 1,
        { timeoutMs: 30_000 },
      );
      assert.equal(gateway.streams.length, 1);
      assert.equal(h.agent.status().accounts.length, 1);
    } finally {
      await h.close();
    }
  });
});
