import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { create } from '@bufbuild/protobuf';
import { AckSchema, ConnectResponseSchema, SyncPhase, type Hello, type ResumePoint } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { dataMessages, sequenceOf, type FakeGateway } from './helpers/fake-gateway.js';
import { endMarkers, eventsOf, markersOf, startHarness } from './helpers/harness.js';
import { eventually } from '../../testkit/eventually.js';

const ack = (sequence: bigint) => create(ConnectResponseSchema, { message: { case: 'ack', value: create(AckSchema, { sequence }) } });

describe('agent connection handling', () => {
  test('backpressure: without acks at most max_unacked data messages are in flight; acks resume the flow', async () => {
    const h = await startHarness({
      seed: { scale: 3000 },
      account: { kinds: ['ConfigMap'] },
      gateway: { autoAck: false, welcome: () => ({ maxUnacked: 2 }) },
    });
    try {
      const { gateway } = h;
      await eventually('two data messages', () => dataMessages(gateway.messages).length === 2, { timeoutMs: 30_000 });
      await new Promise((r) => setTimeout(r, 1300));
      assert.equal(dataMessages(gateway.messages).length, 2, 'nothing more is sent while the window is full');
      // Progress is still reported while the list is held back (every second: waited for, timers fire late under
      // load), and the list did not run ahead.
      await eventually('a progress report', () => gateway.messages.some((m) => m.message.case === 'accountReport'));
      assert.equal(dataMessages(gateway.messages).length, 2, 'still nothing more sent');
      const report = [...gateway.messages].reverse().find((m) => m.message.case === 'accountReport');
      assert.ok(report && report.message.case === 'accountReport', 'progress reported');
      const progress = report.message.value.progress.find((p) => p.kind === 'ConfigMap')!;
      assert.equal(progress.done, false);
      assert.ok(progress.listed > 0n && progress.listed < 3000n, `listed ${progress.listed} objects while blocked`);
      assert.match(h.logs.text(), /"msg":"listing"/);
      // ...but only when it moved: a held-back list is not re-reported every second (each report is a database
      // write at the gateway; 100 accounts re-reporting stalled lists saturated it and kept them stalled).
      // (Compared report to report, not counted: a report of progress made just before the window filled may arrive
      // late on a loaded machine.)
      const progressOf = (m: (typeof gateway.messages)[number]) =>
        m.message.case === 'accountReport' ? m.message.value.progress.map((p) => `${p.kind}:${p.listed}:${p.done}`).join() : undefined;
      await new Promise((r) => setTimeout(r, 2200));
      const reported = gateway.messages.map(progressOf).filter((p) => p !== undefined);
      for (let i = 1; i < reported.length; i++) assert.notEqual(reported[i], reported[i - 1], 'no report repeats unchanged progress');

      // Ack as the gateway would, checking the window every time.
      let acked = 0n;
      while (endMarkers(gateway.messages, 'ConfigMap').length === 0) {
        const sent = dataMessages(gateway.streams[0]!.messages);
        const highest = sent.length > 0 ? sequenceOf(sent[sent.length - 1]!) : 0n;
        assert.ok(highest - acked <= 2n, `in flight ${highest - acked} > max_unacked`);
        if (highest > acked) {
          acked = highest;
          gateway.streams[0]!.send(ack(acked));
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      const listed = eventsOf(gateway.messages).filter((e) => e.kind === 'ConfigMap').length;
      assert.equal(Number(endMarkers(gateway.messages, 'ConfigMap')[0]!.count), listed);
      assert.ok(listed >= 3000);
    } finally {
      await h.close();
    }
  });

  test('reconnect after the gateway drops the stream: fresh Hello, sequences restart, resume from the new Welcome', async () => {
    let gw: FakeGateway | undefined;
    const resumeFromFirstStream = (hello: Hello, stream: number) => {
      if (stream === 0) return {};
      const resume: ResumePoint[] = endMarkers(gw!.streams[0]!.messages, 'ConfigMap').map((m) => ({
        $typeName: 'outpost.agent.v1.ResumePoint',
        apiVersion: m.apiVersion,
        kind: m.kind,
        watchNamespace: m.watchNamespace,
        resourceVersion: m.resourceVersion,
      }));
      return { verdicts: () => hello.accounts.map((a) => ({ account: a.name, resume })) };
    };
    const h = await startHarness({
      seed: 'demo',
      account: { kinds: ['ConfigMap', 'Service'] },
      gateway: { welcome: resumeFromFirstStream },
    });
    gw = h.gateway;
    try {
      await eventually(
        'first lists',
        () => endMarkers(gw!.messages, 'ConfigMap').length === 1 && endMarkers(gw!.messages, 'Service').length === 1,
        { timeoutMs: 30_000 },
      );
      gw.streams[0]!.drop();
      await eventually('second session', () => h.agent.status().sessionId === 'session-1', { timeoutMs: 30_000 });
      h.sandbox.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-reconnect', namespace: 'demo' }, data: {} });
      await eventually('event on the new stream', () => eventsOf(gw!.streams[1]!.messages).find((e) => e.name === 'after-reconnect'), {
        timeoutMs: 30_000,
      });
      await eventually('Service re-listed', () => endMarkers(gw!.streams[1]!.messages, 'Service').length === 1, { timeoutMs: 30_000 });
      const second = gw.streams[1]!;
      assert.equal(second.messages[0]!.message.case, 'hello');
      assert.equal(
        markersOf(second.messages).some((m) => m.kind === 'ConfigMap'),
        false,
        'ConfigMap resumed, not listed',
      );
      assert.deepEqual(
        markersOf(second.messages)
          .filter((m) => m.kind === 'Service')
          .map((m) => m.phase),
        [SyncPhase.START, SyncPhase.END],
      );
      assert.deepEqual(
        dataMessages(second.messages).map(sequenceOf),
        dataMessages(second.messages).map((_, i) => BigInt(i + 1)),
      );
      assert.match(h.logs.text(), /lost the gateway stream/);
    } finally {
      await h.close();
    }
  });

  test('a stream that lasted reconnect.stableSeconds is retried at once and starts the backoff over; shorter ones keep growing it', async () => {
    const attemptsLogged = async (stableSeconds: number) => {
      const h = await startHarness({
        seed: 'none',
        config: { clouddriver: { reconnect: { baseSeconds: 0.02, factor: 2, maxSeconds: 0.02, stableSeconds } } },
      });
      try {
        for (let i = 0; i < 2; i++) {
          await eventually(`stream ${i + 1}`, () => h.gateway.streams.length === i + 1 && h.agent.status().connected, {
            timeoutMs: 30_000,
          });
          await new Promise((r) => setTimeout(r, 400));
          h.gateway.streams[i]!.drop();
        }
        await eventually(
          'two drops logged',
          () => h.logs.lines().filter((l) => String(l.msg).startsWith('lost the gateway stream')).length === 2,
          { timeoutMs: 30_000 },
        );
        return h.logs
          .lines()
          .filter((l) => String(l.msg).startsWith('lost the gateway stream'))
          .map((l) => l.attempt);
      } finally {
        await h.close();
      }
    };
    // Healthy streams (past stableSeconds): the retry goes at once (attempt 0, no delay drawn), the backoff at its start.
    assert.deepEqual(await attemptsLogged(0.2), [0, 0]);
    assert.deepEqual(await attemptsLogged(60), [1, 2]);
  });

  test('heartbeats are sent; a silent gateway is declared dead after 3 intervals and the agent reconnects', async () => {
    const h = await startHarness({
      seed: 'none',
      gateway: { silent: true },
      config: { clouddriver: { keepAliveHeartbeatSeconds: 1, reconnect: { baseSeconds: 0.05, factor: 1, maxSeconds: 0.05 } } },
    });
    try {
      await eventually('a second stream after the dead-peer timeout', () => h.gateway.streams.length >= 2, { timeoutMs: 30_000 });
      assert.ok(h.gateway.streams[0]!.messages.some((m) => m.message.case === 'heartbeat' && m.message.value.agentId === 'test-agent'));
      assert.match(h.logs.text(), /no message from the gateway for \d+ s/);
    } finally {
      await h.close();
    }
  });

  test('unreachable gateway: retries with backoff and says where, why and when', async () => {
    const h = await startHarness({
      seed: 'none',
      config: { clouddriver: { grpc: '127.0.0.1:1', reconnect: { baseSeconds: 0.02, factor: 2, maxSeconds: 0.1 } } },
    });
    try {
      await eventually('three failures logged', () => (h.logs.text().match(/cannot connect to the gateway/g)?.length ?? 0) >= 3, {
        timeoutMs: 30_000,
      });
      const line = h.logs.lines().find((l) => String(l.msg).startsWith('cannot connect to the gateway'))!;
      assert.match(String(line.msg), /^cannot connect to the gateway at 127\.0\.0\.1:1: .*ECONNREFUSED.*; next retry in \d+\.\d s$/);
      assert.equal(line.gateway, '127.0.0.1:1');
      assert.equal(h.agent.status().connected, false);
    } finally {
      await h.close();
    }
  });

  test('an HTTP/1.1 server on the gateway port: the error mentions HTTP/1.1 proxies', async () => {
    const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>proxy</html>'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const h = await startHarness({
      seed: 'none',
      config: {
        clouddriver: { grpc: `127.0.0.1:${port}`, transport: 'grpc', reconnect: { baseSeconds: 0.05, factor: 1, maxSeconds: 0.05 } },
      },
    });
    try {
      await eventually('the proxy hint', () => /HTTP\/1\.1-only proxy/.test(h.logs.text()), { timeoutMs: 30_000 });
    } finally {
      await h.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
