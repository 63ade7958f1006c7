/**
 * The dispatch seam alone (no sockets): which stream gets an operation — the local caching stream only while its
 * lease is known valid, else a local STANDBY stream, else another replica (lease holder first) — and how a failed
 * forward drops the cached owner answer and tries the next replica; a replica of an earlier version, which does not
 * know the forwarding path, is sent the operation on the earlier path.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { create } from '@bufbuild/protobuf';
import { OperationSchema, type Operation } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { createSessionRegistry, type LiveSession } from '../../src/gateway/agents/session-registry.js';
import { createDispatch, dispatchLocal, FORWARD_PATH, LEGACY_FORWARD_PATH } from '../../src/gateway/replicas/dispatch.js';
import type { PeerClient } from '../../src/gateway/replicas/peer-client.js';
import { createSilentLogger } from '../../src/shared/logger.js';

function session(id: string, serves: string[]): LiveSession & { sent: Operation[] } {
  const sent: Operation[] = [];
  return {
    id,
    agentId: `agent-${id}`,
    zone: '',
    connection: 0,
    principal: { subject: 'test', roles: new Set(), accounts: {} } as never,
    close: () => {},
    done: Promise.resolve(),
    serves: (a) => serves.includes(a),
    sendOperation: (op) => (sent.push(op), true),
    sendAccountCommand: () => true,
    openKube: () => undefined,
    sessionToken: 't',
    standbyAccounts: () => [],
    promote: async () => {},
    leaseLost: async () => {},
    sent,
  };
}

const op = create(OperationSchema, { id: 'op-1', account: 'acct', spec: { case: 'get', value: { kind: 'ConfigMap', name: 'x' } } });

test('local: the caching stream while its lease is valid; a STANDBY stream when the lease is not known valid', () => {
  const registry = createSessionRegistry();
  const caching = session('c', ['acct']);
  const standby = session('s', ['acct']);
  registry.add(caching);
  registry.add(standby);
  registry.claim('acct', caching);
  // Claimed but not granted yet: not used.
  assert.equal(dispatchLocal(registry, 'acct', op)?.sessionId, 's');
  registry.grant('acct', caching, 3, performance.now() + 10_000);
  assert.equal(dispatchLocal(registry, 'acct', op)?.sessionId, 'c');
  // A renewal overdue (validity passed): the caching stream is not used any more.
  registry.grant('acct', caching, 3, performance.now() - 1);
  assert.equal(dispatchLocal(registry, 'acct', op)?.sessionId, 's');
  registry.remove(standby);
  assert.equal(dispatchLocal(registry, 'acct', op), undefined);
  // An older epoch never replaces a newer grant.
  registry.grant('acct', caching, 2, performance.now() + 10_000);
  assert.equal(registry.leaseOf('acct')?.epoch, 3);
});

test('forwarding: the lease holder first; a refusal or an unknown replica drops the cached owners and the next replica is tried; an unanswered forward is not sent elsewhere', async () => {
  const registry = createSessionRegistry();
  const calls: string[] = [];
  let forgotten = 0;
  const peers: PeerClient = {
    async post(baseUrl, path, body) {
      assert.equal(path, FORWARD_PATH);
      assert.deepEqual((body as { origin: string }).origin, 'gw-self');
      calls.push(baseUrl);
      if (baseUrl.includes('gw-a')) return { status: 409, body: { error: 'no_stream' } };
      if (baseUrl.includes('gw-b')) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      if (baseUrl.includes('gw-reset')) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      return { status: 200, body: { agentId: 'agent-9', sessionId: 's-9', gatewayId: 'gw-c' } };
    },
    async postAnswered(baseUrl, path, body) {
      return this.post(baseUrl, path, body);
    },
    close: () => {},
  };
  const directory = new Map([
    ['gw-a', { id: 'gw-a', baseUrl: 'http://gw-a', lastUpdated: new Date(), ready: true }],
    ['gw-b', { id: 'gw-b', baseUrl: 'http://gw-b', lastUpdated: new Date(), ready: true }],
    ['gw-c', { id: 'gw-c', baseUrl: 'http://gw-c', lastUpdated: new Date(), ready: true }],
    ['gw-draining', { id: 'gw-draining', baseUrl: 'http://gw-draining', lastUpdated: new Date(), ready: false }],
  ]);
  const dispatch = createDispatch(registry, {
    selfId: 'gw-self',
    owners: { replicasFor: async () => ['gw-gone', 'gw-draining', 'gw-a', 'gw-b', 'gw-c'], forget: () => void forgotten++ },
    replicas: { get: (id) => directory.get(id) },
    peers,
    logger: createSilentLogger(),
  });
  const target = await dispatch('acct', op);
  assert.deepEqual(target, { agentId: 'agent-9', sessionId: 's-9', gatewayId: 'gw-c' });
  assert.deepEqual(calls, ['http://gw-a', 'http://gw-b', 'http://gw-c']);
  assert.equal(forgotten, 4, 'unknown, draining, refusing and unreachable replicas each drop the cached answer');

  // A forward whose answer was lost may have run: it counts as sent and goes nowhere else.
  calls.length = 0;
  directory.set('gw-reset', { id: 'gw-reset', baseUrl: 'http://gw-reset', lastUpdated: new Date(), ready: true });
  const ambiguous = createDispatch(registry, {
    selfId: 'gw-self',
    owners: { replicasFor: async () => ['gw-reset', 'gw-c'], forget: () => {} },
    replicas: { get: (id) => directory.get(id) },
    peers,
    logger: createSilentLogger(),
  });
  const unknown = await ambiguous('acct', op);
  assert.equal(unknown?.gatewayId, 'gw-reset');
  assert.match(unknown!.agentId, /unknown/);
  assert.deepEqual(calls, ['http://gw-reset']);

  const none = createDispatch(registry, {
    selfId: 'gw-self',
    owners: { replicasFor: async () => [], forget: () => {} },
    replicas: { get: () => undefined },
    peers,
    logger: createSilentLogger(),
  });
  assert.equal(await none('acct', op), undefined);
});

test('forwarding to a replica of an earlier version: refused on the forwarding path as an unknown route (403, 404), sent again on the earlier path; a 200 or a 409 is not sent again', async () => {
  const registry = createSessionRegistry();
  const calls: string[] = [];
  // gw-old-*: an earlier version (the path needs the admin role there, or has no route in insecure mode); gw-new-*:
  // this version, refusing or not taking the operation.
  const peers: PeerClient = {
    async post(baseUrl, path) {
      const name = new URL(baseUrl).hostname;
      calls.push(`${name} ${path}`);
      if (name === 'gw-old-secure' && path === FORWARD_PATH) return { status: 403, body: { error: 'permission_denied' } };
      if (name === 'gw-old-insecure' && path === FORWARD_PATH) return { status: 404, body: { error: 'not_found' } };
      if (name === 'gw-new-busy') return { status: 409, body: { error: 'no_stream' } };
      if (name === 'gw-new-refusing') return { status: 403, body: { error: 'permission_denied' } };
      return { status: 200, body: { agentId: `agent-${name}`, sessionId: `s-${name}`, gatewayId: name } };
    },
    async postAnswered(baseUrl, path, body) {
      return this.post(baseUrl, path, body);
    },
    close: () => {},
  };
  const forwardVia = (ids: string[]) =>
    createDispatch(registry, {
      selfId: 'gw-self',
      owners: { replicasFor: async () => ids, forget: () => {} },
      replicas: { get: (id) => ({ id, baseUrl: `http://${id}`, lastUpdated: new Date(), ready: true }) },
      peers,
      logger: createSilentLogger(),
    });

  assert.equal((await forwardVia(['gw-old-secure'])('acct', op))?.sessionId, 's-gw-old-secure');
  assert.deepEqual(calls.splice(0), [`gw-old-secure ${FORWARD_PATH}`, `gw-old-secure ${LEGACY_FORWARD_PATH}`]);
  assert.equal((await forwardVia(['gw-old-insecure'])('acct', op))?.sessionId, 's-gw-old-insecure');
  assert.deepEqual(calls.splice(0), [`gw-old-insecure ${FORWARD_PATH}`, `gw-old-insecure ${LEGACY_FORWARD_PATH}`]);

  // This version answers on the forwarding path: a replica taking it, or one without a stream, is called once.
  assert.equal((await forwardVia(['gw-new-busy', 'gw-new'])('acct', op))?.sessionId, 's-gw-new');
  assert.deepEqual(calls.splice(0), [`gw-new-busy ${FORWARD_PATH}`, `gw-new ${FORWARD_PATH}`]);
  // A refusal by this version is asked again on the earlier path, which runs the same checks and refuses it again.
  assert.equal(await forwardVia(['gw-new-refusing'])('acct', op), undefined);
  assert.deepEqual(calls.splice(0), [`gw-new-refusing ${FORWARD_PATH}`, `gw-new-refusing ${LEGACY_FORWARD_PATH}`]);
});
