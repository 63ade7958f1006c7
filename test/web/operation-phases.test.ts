/**
 * An operation's timeline as the dashboard draws it (web/src/operation-phases.ts), run in node: the phases between
 * the gateway's timestamps, the agent's Kubernetes time split out of the agent phase, the running phase of an open
 * operation measured to `now`, the phase an operation ended in without a result, gaps that clock skew made
 * negative clamped to 0, and the slowest phase.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { durationFromMs, timestampFromMs } from '@bufbuild/protobuf/wkt';
import { OperationResultSchema } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { OperationRecordSchema, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { describePhases, operationPhases, type PhaseSource } from '../../web/src/operation-phases.js';

const T0 = Date.UTC(2026, 10, 28, 14, 3, 5);

/** The record of an operation received at T0, with the other instants given as ms after T0. */
function record(
  state: OperationState,
  at: { stored?: number; sent?: number; result?: number; ended?: number; kubernetesMs?: number },
): PhaseSource {
  return create(OperationRecordSchema, {
    id: 'op-1',
    account: 'prod',
    state,
    receivedAt: timestampFromMs(T0),
    storedAt: at.stored === undefined ? undefined : timestampFromMs(T0 + at.stored),
    sentAt: at.sent === undefined ? undefined : timestampFromMs(T0 + at.sent),
    resultAt: at.result === undefined ? undefined : timestampFromMs(T0 + at.result),
    totalDuration: at.ended === undefined ? undefined : durationFromMs(at.ended),
    result:
      at.result === undefined
        ? undefined
        : create(OperationResultSchema, {
            success: state === OperationState.SUCCEEDED,
            kubernetesDuration: at.kubernetesMs === undefined ? undefined : durationFromMs(at.kubernetesMs),
          }),
  });
}

/** The phases as `name:ms:status` strings, for one readable comparison. */
function summary(source: PhaseSource, now = T0 + 60_000): string[] {
  return operationPhases(source, now).phases.map((p) => `${p.name}:${p.ms}:${p.status}`);
}

describe('operation timeline phases', () => {
  test('a finished operation: store, dispatch, agent less the Kubernetes time, Kubernetes, result', () => {
    const op = record(OperationState.SUCCEEDED, { stored: 4, sent: 6, result: 46, ended: 46, kubernetesMs: 30 });
    assert.deepEqual(summary(op), ['store:4:done', 'dispatch:2:done', 'agent:10:done', 'kubernetes:30:done', 'result:0:done']);
    const phases = operationPhases(op, T0);
    assert.equal(phases.totalMs, 46, 'the phases add up to received → end');
    assert.equal(phases.slowest, 'kubernetes');
    assert.equal(describePhases(phases), 'store 4.0 ms, dispatch 2.0 ms, agent 10 ms, Kubernetes 30 ms, result 0 ms; slowest: Kubernetes');
  });

  test('without a reported Kubernetes time the agent is one phase; a Kubernetes time over the span is capped', () => {
    const op = record(OperationState.FAILED, { stored: 1, sent: 2, result: 12, ended: 12 });
    assert.deepEqual(summary(op), ['store:1:done', 'dispatch:1:done', 'agent:10:done', 'result:0:done']);
    const over = record(OperationState.SUCCEEDED, { stored: 1, sent: 2, result: 12, ended: 12, kubernetesMs: 25 });
    assert.deepEqual(summary(over), ['store:1:done', 'dispatch:1:done', 'agent:0:done', 'kubernetes:10:done', 'result:0:done']);
  });

  test('an open operation shows the phases so far, the current one running to now', () => {
    const pending = record(OperationState.PENDING, { stored: 3 });
    assert.deepEqual(summary(pending, T0 + 2_003), ['store:3:done', 'dispatch:2000:running']);
    const sent = record(OperationState.SENT, { stored: 3, sent: 5 });
    const phases = operationPhases(sent, T0 + 1_005);
    assert.deepEqual(
      phases.phases.map((p) => `${p.name}:${p.ms}:${p.status}`),
      ['store:3:done', 'dispatch:2:done', 'agent:1000:running'],
    );
    assert.equal(phases.slowest, 'agent');
    assert.match(describePhases(phases), /agent 1\.00 s so far; slowest: agent$/);
    const unstored = record(OperationState.PENDING, {});
    assert.deepEqual(summary(unstored, T0 + 7), ['store:7:running']);
  });

  test('an operation that ended without a result ends in the phase it was in, cut at its end', () => {
    const timedOut = record(OperationState.TIMED_OUT, { stored: 2, sent: 4, ended: 30_000 });
    assert.deepEqual(summary(timedOut), ['store:2:done', 'dispatch:2:done', 'agent:29996:cut']);
    assert.match(describePhases(operationPhases(timedOut, T0)), /agent 30\.0 s \(ended here\); slowest: agent$/);
    const noAgent = record(OperationState.FAILED, { stored: 2, ended: 10_002 });
    assert.deepEqual(summary(noAgent), ['store:2:done', 'dispatch:10000:cut']);
    const noEnd = record(OperationState.FAILED, { stored: 2 });
    assert.deepEqual(summary(noEnd), ['store:2:done'], 'a terminal record without its total draws no open-ended phase');
  });

  test('a step not recorded before a later one gives its phase 0 ms (a read is sent without being stored)', () => {
    const read = record(OperationState.SUCCEEDED, { sent: 1, result: 9, ended: 9, kubernetesMs: 5 });
    assert.deepEqual(summary(read), ['store:0:done', 'dispatch:1:done', 'agent:3:done', 'kubernetes:5:done', 'result:0:done']);
  });

  test('clock skew between replicas, or with the browser, never gives a negative phase', () => {
    const skewed = record(OperationState.SUCCEEDED, { stored: 5, sent: 3, result: 20, ended: 19, kubernetesMs: 4 });
    assert.deepEqual(summary(skewed), ['store:5:done', 'dispatch:0:done', 'agent:13:done', 'kubernetes:4:done', 'result:0:done']);
    const future = record(OperationState.SENT, { stored: 1, sent: 2 });
    assert.deepEqual(summary(future, T0 - 500), ['store:1:done', 'dispatch:1:done', 'agent:0:running'], 'the browser clock behind');
  });

  test('no slowest phase when nothing took time; equals give the first', () => {
    const instant = record(OperationState.SUCCEEDED, { stored: 0, sent: 0, result: 0, ended: 0, kubernetesMs: 0 });
    const phases = operationPhases(instant, T0);
    assert.equal(phases.totalMs, 0);
    assert.equal(phases.slowest, undefined);
    assert.doesNotMatch(describePhases(phases), /slowest/);
    assert.equal(operationPhases(record(OperationState.SUCCEEDED, { stored: 5, sent: 10, result: 12, ended: 12 }), T0).slowest, 'store');
    assert.equal(describePhases({ phases: [], totalMs: 0, slowest: undefined }), 'no timing recorded');
  });
});
