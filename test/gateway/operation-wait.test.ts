/**
 * A submitter's wait (operation-reads.ts, waitTerminal): it ends with the terminal row, with CANCELED when the caller
 * goes away, with the latest row when the manager closes or the deadline (plus its grace) passes — and each way it
 * leaves no listener behind on the request's signal or on the manager's shutdown signal, which every waiting
 * submitter shares (thousands a second under load).
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { createOperationNotifier } from '../../src/gateway/operations/operation-notifier.js';
import type { OperationContext } from '../../src/gateway/operations/operation-context.js';
import { createOperationReads } from '../../src/gateway/operations/operation-reads.js';
import type { OperationRow } from '../../src/gateway/operations/operation-store.js';

function row(id: string, state: OperationRow['state'], deadlineInMs = 60_000): OperationRow {
  const now = new Date();
  return {
    id,
    account: 'acc',
    type: 'get',
    request: {},
    state,
    gatewayId: 'gw',
    timeoutMs: deadlineInMs,
    receivedAt: now,
    storedAt: now,
    deadlineAt: new Date(now.getTime() + deadlineInMs),
    requestHash: '',
    requestedBy: '',
    result: null,
    error: '',
    agentId: '',
    sessionId: '',
    sentAt: null,
    resultAt: null,
    finishedAt: null,
  } as OperationRow;
}

function setup() {
  const closing = new AbortController();
  const notifier = createOperationNotifier();
  const stored = new Map<string, OperationRow>();
  const ctx = {
    store: { get: async (id: string) => stored.get(id) },
    notifier,
    locals: new Map(),
    closing: closing.signal,
    pollIntervalMs: 50,
  } as unknown as OperationContext;
  const track = (r: OperationRow) => {
    stored.set(r.id, r);
    (ctx.locals as Map<string, unknown>).set(r.id, { row: r });
  };
  return { reads: createOperationReads(ctx), closing, notifier, stored, track };
}

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('waiting for an operation to end', () => {
  test('the terminal row ends many concurrent waits; no listener is left on the shutdown or request signals', async () => {
    const { reads, closing, notifier, track } = setup();
    const before = listeners(closing.signal);
    const request = new AbortController();
    const rows = Array.from({ length: 50 }, (_, i) => row(`w-${i}`, 'PENDING'));
    rows.forEach(track);
    const waits = rows.map((r) => reads.waitTerminal(r, request.signal));
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(listeners(closing.signal) >= before + 50, 'each wait listens for the shutdown while it runs');
    for (const r of rows) notifier.publish({ ...r, state: 'SUCCEEDED' });
    const ended = await Promise.all(waits);
    assert.deepEqual(new Set(ended.map((r) => r.state)), new Set(['SUCCEEDED']));
    assert.equal(listeners(closing.signal), before);
    assert.equal(listeners(request.signal), 0);
  });

  test('the caller going away → CANCELED; the manager closing → the latest row; both release their listeners', async () => {
    const { reads, closing, track } = setup();
    const before = listeners(closing.signal);
    const request = new AbortController();
    const r1 = row('c-1', 'SENT');
    track(r1);
    const cancelled = reads.waitTerminal(r1, request.signal);
    request.abort();
    await assert.rejects(cancelled, (err: unknown) => err instanceof ConnectError && err.code === Code.Canceled);
    assert.equal(listeners(request.signal), 0);
    assert.equal(listeners(closing.signal), before);

    const r2 = row('c-2', 'SENT');
    track(r2);
    const other = new AbortController();
    const closed = reads.waitTerminal(r2, other.signal);
    closing.abort();
    assert.equal((await closed).state, 'SENT');
    assert.equal(listeners(other.signal), 0);
    assert.equal(listeners(closing.signal), 0);
  });

  test('past the deadline and its grace the wait ends with the latest row', async () => {
    const { reads, closing, track } = setup();
    const r = row('d-1', 'SENT', 0);
    track(r);
    const request = new AbortController();
    assert.equal((await reads.waitTerminal(r, request.signal)).state, 'SENT');
    assert.equal(listeners(request.signal), 0);
    assert.equal(listeners(closing.signal), 0);
  });
});
