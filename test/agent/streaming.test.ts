import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventType, SyncPhase, Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { dataMessages, sequenceOf } from './helpers/fake-gateway.js';
import { endMarkers, eventsOf, markersOf, startHarness } from './helpers/harness.js';
import { eventually } from '../../testkit/eventually.js';

const configMap = (name: string, data: Record<string, string> = { a: '1' }) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'demo' },
  data,
});

describe('agent streaming against the sandbox', () => {
  test('lists the demo seed between markers, scrubs secrets, then streams create/update/delete', async () => {
    const h = await startHarness({ seed: 'demo' });
    try {
      const { gateway, sandbox } = h;
      await eventually(
        'initial lists',
        () => ['Secret', 'ConfigMap', 'Deployment', 'Service'].every((k) => endMarkers(gateway.messages, k).length > 0),
        { timeoutMs: 30_000 },
      );
      const hello = gateway.streams[0]!.hello!;
      assert.equal(hello.agentId, 'test-agent');
      assert.equal(hello.zone, 'test');
      const account = hello.accounts[0]!;
      assert.equal(account.name, 'sandbox');
      assert.equal(account.apiHost, sandbox.url);
      assert.match(account.kubernetesVersion, /^v1\./);
      assert.ok(
        account.kinds.some((k) => k.kind === 'Deployment' && k.apiVersion === 'apps/v1' && k.resource === 'deployments' && k.namespaced),
      );
      assert.equal(gateway.streams[0]!.headers.get('x-outpost-agent-id'), 'test-agent');

      // Each kind: START, its objects as ADDED, END with the list's resourceVersion and count.
      const stream = gateway.streams[0]!.messages;
      for (const [kind, name] of [
        ['ConfigMap', 'web-config'],
        ['Secret', 'web-secret'],
        ['Deployment', 'web'],
        ['Service', 'web'],
      ] as const) {
        const start = stream.findIndex(
          (m) => m.message.case === 'sync' && m.message.value.kind === kind && m.message.value.phase === SyncPhase.START,
        );
        const end = stream.findIndex(
          (m) => m.message.case === 'sync' && m.message.value.kind === kind && m.message.value.phase === SyncPhase.END,
        );
        assert.ok(start >= 0 && end > start, `${kind} bracketed by markers`);
        const between = eventsOf(stream.slice(start, end)).filter((e) => e.kind === kind);
        assert.ok(between.every((e) => e.type === EventType.ADDED));
        const endMarker = stream[end]!.message.value as { count: bigint; resourceVersion: string };
        assert.equal(Number(endMarker.count), between.length);
        assert.notEqual(endMarker.resourceVersion, '');
        const object = between.find((e) => e.name === name && e.namespace === 'demo');
        assert.ok(object, `${kind} ${name} listed`);
        const json = JSON.parse(Buffer.from(object.objectJson).toString()) as Record<string, unknown>;
        assert.equal(json.kind, kind);
        assert.ok(object.uid !== '' && object.resourceVersion !== '');
      }
      const secretEvent = eventsOf(stream).find((e) => e.kind === 'Secret' && e.name === 'web-secret')!;
      const secretJson = JSON.parse(Buffer.from(secretEvent.objectJson).toString()) as Record<string, unknown>;
      assert.equal(secretJson.data, undefined);
      assert.equal(secretJson.stringData, undefined);

      // Sequences: 1, 2, 3… on the stream.
      assert.deepEqual(
        dataMessages(stream).map(sequenceOf),
        dataMessages(stream).map((_, i) => BigInt(i + 1)),
      );

      // Changes propagate.
      sandbox.store.create(configMap('live'));
      await eventually('ADDED live', () => eventsOf(gateway.messages).find((e) => e.name === 'live' && e.type === EventType.ADDED), {
        timeoutMs: 30_000,
      });
      sandbox.store.update({ ...configMap('live', { a: '2' }) });
      const modified = await eventually(
        'MODIFIED live',
        () => eventsOf(gateway.messages).find((e) => e.name === 'live' && e.type === EventType.MODIFIED),
        { timeoutMs: 30_000 },
      );
      assert.match(Buffer.from(modified.objectJson).toString(), /"a":"2"/);
      assert.equal(modified.watchNamespace, '');
      sandbox.store.remove('v1', 'ConfigMap', 'demo', 'live');
      await eventually('DELETED live', () => eventsOf(gateway.messages).find((e) => e.name === 'live' && e.type === EventType.DELETED), {
        timeoutMs: 30_000,
      });

      // A secret changed while watching is scrubbed too; no secret byte ever crossed the wire.
      sandbox.store.update({
        ...(sandbox.store.get('v1', 'Secret', 'demo', 'web-secret') as object),
        stringData: undefined,
        data: { password: Buffer.from('s3cr3t-rotated').toString('base64') },
        metadata: {
          name: 'web-secret',
          namespace: 'demo',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"stringData":{"password":"s3cr3t-rotated"}}' },
        },
      });
      await eventually(
        'MODIFIED secret',
        () => eventsOf(gateway.messages).find((e) => e.name === 'web-secret' && e.type === EventType.MODIFIED),
        { timeoutMs: 30_000 },
      );
      const raw = gateway.rawBytes();
      for (const needle of ['s3cr3t', Buffer.from('s3cr3t-demo').toString('base64'), Buffer.from('s3cr3t-rotated').toString('base64')]) {
        assert.equal(raw.includes(needle), false, `${needle} must never be sent`);
      }

      // Status and admin endpoint.
      const status = h.agent.status();
      assert.equal(status.connected, true);
      assert.equal(status.sessionId, 'session-0');
      assert.equal(status.accounts[0]!.verdict, 'caching');
      assert.ok(status.accounts[0]!.watches.some((w) => w.kind === 'ConfigMap' && w.state === 'watching' && w.resourceVersion !== ''));
      const health = (await (await fetch(`http://127.0.0.1:${h.agent.adminPort}/health`)).json()) as { status: string; connected: boolean };
      assert.deepEqual(health, { status: 'UP', connected: true, sessionId: 'session-0', accounts: { ready: 1, total: 1 } });
    } finally {
      await h.close();
    }
  });

  test('restricted RBAC: forbidden kinds are reported in skipped_kinds, the others stream', async () => {
    const h = await startHarness({ seed: 'demo', user: 'restricted' });
    try {
      await eventually('ConfigMap list', () => endMarkers(h.gateway.messages, 'ConfigMap').length > 0, { timeoutMs: 30_000 });
      const account = h.gateway.streams[0]!.hello!.accounts[0]!;
      const skipped = new Map(account.skippedKinds.map((s) => [s.kind, s.reason]));
      assert.match(skipped.get('Secret') ?? '', /forbidden/);
      assert.match(skipped.get('StatefulSet') ?? '', /forbidden/);
      assert.equal(
        account.kinds.some((k) => k.kind === 'Secret'),
        false,
      );
      assert.ok(account.kinds.some((k) => k.kind === 'ConfigMap'));
      assert.equal(
        markersOf(h.gateway.messages).some((m) => m.kind === 'Secret'),
        false,
      );
      assert.ok(h.agent.status().accounts[0]!.skipped.some((s) => s.kind === 'Secret'));
    } finally {
      await h.close();
    }
  });

  test('namespaces and kinds: one watch per namespace, only the chosen kinds', async () => {
    const h = await startHarness({ seed: 'demo', account: { namespaces: ['demo', 'default'], kinds: ['ConfigMap', 'Deployment.apps'] } });
    try {
      await eventually(
        'lists',
        () => endMarkers(h.gateway.messages, 'Deployment').length === 2 && endMarkers(h.gateway.messages, 'ConfigMap').length === 2,
        { timeoutMs: 30_000 },
      );
      const scopes = new Set(markersOf(h.gateway.messages).map((m) => `${m.kind}@${m.watchNamespace}`));
      assert.deepEqual([...scopes].sort(), ['ConfigMap@default', 'ConfigMap@demo', 'Deployment@default', 'Deployment@demo']);
      assert.deepEqual(h.gateway.streams[0]!.hello!.accounts[0]!.namespaces, ['demo', 'default']);
      h.sandbox.store.create(configMap('scoped'));
      const e = await eventually('scoped event', () => eventsOf(h.gateway.messages).find((x) => x.name === 'scoped'), {
        timeoutMs: 30_000,
      });
      assert.equal(e.watchNamespace, 'demo');
    } finally {
      await h.close();
    }
  });

  test('resume points: no list, and changes since the resourceVersion arrive', async () => {
    let resumeRv = '';
    const h = await startHarness({
      seed: 'demo',
      account: { kinds: ['ConfigMap', 'Deployment'] },
      beforeAgent: (sandbox) => {
        resumeRv = String(sandbox.store.resourceVersion);
        sandbox.store.create(configMap('made-while-away'));
      },
      gateway: {
        welcome: (hello) => ({
          verdicts: () =>
            hello.accounts.map((a) => ({
              account: a.name,
              resume: a.kinds.map((k) => ({
                apiVersion: k.apiVersion,
                kind: k.kind,
                watchNamespace: '',
                resourceVersion: resumeRv,
                $typeName: 'outpost.agent.v1.ResumePoint' as const,
              })),
            })),
        }),
      },
    });
    try {
      const added = await eventually(
        'change since resume point',
        () => eventsOf(h.gateway.messages).find((e) => e.name === 'made-while-away'),
        { timeoutMs: 30_000 },
      );
      assert.equal(added.type, EventType.ADDED);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(markersOf(h.gateway.messages).length, 0, 'no SyncMarker: nothing was listed');
      assert.equal(
        eventsOf(h.gateway.messages).some((e) => e.name === 'web-config'),
        false,
        'seeded objects not re-sent',
      );
    } finally {
      await h.close();
    }
  });

  test('410 Gone → full re-list bracketed by markers; a dropped watch is restarted', async () => {
    const h = await startHarness({ seed: 'demo', account: { kinds: ['ConfigMap'] } });
    try {
      const { gateway, sandbox } = h;
      await eventually('first list', () => endMarkers(gateway.messages, 'ConfigMap').length === 1, { timeoutMs: 30_000 });
      await eventually('watching', () => h.agent.status().accounts[0]!.watches[0]?.state === 'watching', { timeoutMs: 30_000 });

      sandbox.faults.closeWatches();
      await new Promise((r) => setTimeout(r, 50));
      sandbox.store.create(configMap('after-drop'));
      await eventually('event after the watch was dropped', () => eventsOf(gateway.messages).find((e) => e.name === 'after-drop'), {
        timeoutMs: 30_000,
      });
      assert.equal(endMarkers(gateway.messages, 'ConfigMap').length, 1, 'a dropped watch resumes without re-listing');

      sandbox.faults.expireHistory();
      await eventually('re-list after 410', () => endMarkers(gateway.messages, 'ConfigMap').length === 2, { timeoutMs: 30_000 });
      const markers = markersOf(gateway.messages)
        .filter((m) => m.kind === 'ConfigMap')
        .map((m) => m.phase);
      assert.deepEqual(markers, [SyncPhase.START, SyncPhase.END, SyncPhase.START, SyncPhase.END]);
      const stream = gateway.streams[0]!.messages;
      const secondStart =
        stream.length - 1 - [...stream].reverse().findIndex((m) => m.message.case === 'sync' && m.message.value.phase === SyncPhase.START);
      const relisted = eventsOf(stream.slice(secondStart))
        .filter((e) => e.type === EventType.ADDED)
        .map((e) => e.name);
      assert.ok(relisted.includes('after-drop') && relisted.includes('web-config'), 'the re-list sends every object again');

      sandbox.faults.failNextWatches(1, 410);
      sandbox.faults.closeWatches();
      await eventually('re-list after HTTP 410', () => endMarkers(gateway.messages, 'ConfigMap').length === 3, { timeoutMs: 30_000 });
      sandbox.faults.failNextWatches(2, 500);
      sandbox.faults.closeWatches();
      sandbox.store.create(configMap('after-500'));
      await eventually('event after watch errors', () => eventsOf(gateway.messages).find((e) => e.name === 'after-500'), {
        timeoutMs: 30_000,
      });
      assert.match(h.logs.text(), /watch failed; restarting from the last seen resourceVersion/);
    } finally {
      await h.close();
    }
  });

  test('STANDBY and REFUSED accounts are not streamed', async () => {
    const h = await startHarness({
      seed: 'demo',
      gateway: {
        welcome: (hello) => ({
          verdicts: () => hello.accounts.map((a) => ({ account: a.name, verdict: Verdict.STANDBY, reason: 'another agent caches it' })),
        }),
      },
    });
    try {
      await eventually('standby', () => h.agent.status().accounts[0]!.verdict === 'standby', { timeoutMs: 30_000 });
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(dataMessages(h.gateway.messages).length, 0);
      assert.match(h.logs.text(), /another agent caches it/);
    } finally {
      await h.close();
    }
  });
});
