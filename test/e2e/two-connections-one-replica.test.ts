/**
 * `clouddriver.connections: 2` against a single gateway replica (in process): the second connection to reach that
 * replica reconnects to look for another, gives up after a bounded number of tries saying so, and then stands by
 * beside the first on the same replica — one caching, one standing by; the agent's status shows both connections and
 * the account once, as caching. Operations run; and when the caching connection's stream is cut, the cache stays exact.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { describeFailure } from '../../src/client/format.js';
import { createOperationClient } from '../../src/client/operation-client.js';
import { OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createLogger } from '../../src/shared/logger.js';
import { MAX_SAME_REPLICA_TRIES } from '../../src/agent/stream/connection-loop.js';
import type { RunningAgent } from '../../src/agent/index.js';
import { waitForAccounts } from '../../testkit/accounts-ready.js';
import { waitForCacheToMatch } from '../../testkit/cache-compare.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { captureLogs } from '../../testkit/log-capture.js';

describe('two connections, one replica', { concurrency: false }, () => {
  let stack: Stack;
  let agent: RunningAgent;
  const logs = captureLogs();

  before(async () => {
    stack = await startStack();
    agent = await stack.startAgent({
      config: { clouddriver: { connections: 2 } },
      logger: createLogger({ level: 'debug', destination: logs.stream }),
    });
    await waitForAccounts(stack.gateway.httpUrl, ['sandbox']);
  });
  after(async () => {
    await stack?.close();
  });

  test('the second connection looks for another replica a bounded number of times, then stands by beside the first', async () => {
    await eventually('both connections connected', () => agent.status().connections?.every((c) => c.connected) === true, {
      timeoutMs: 30_000,
    });
    const retries = logs
      .lines()
      .filter((l) => /which the agent's other connection is on; reconnecting to reach another$/.test(String(l.msg)));
    assert.equal(retries.length, MAX_SAME_REPLICA_TRIES, 'bounded retries');
    assert.ok(logs.lines().some((l) => /only one replica seems reachable; keeping it$/.test(String(l.msg))));
    const status = agent.status();
    assert.deepEqual(
      status.connections?.map((c) => [c.connection, c.gatewayId]),
      [
        [0, 'gw-1'],
        [1, 'gw-1'],
      ],
    );
    assert.equal(status.accounts.length, 1);
    assert.equal(status.accounts[0]!.verdict, 'caching');
    const res = await fetch(`${stack.gateway.httpUrl}/armory/agents`);
    const streams = (await res.json()) as { caching: string[]; standby: string[] }[];
    assert.equal(streams.length, 2);
    assert.deepEqual(streams.map((s) => [s.caching.length, s.standby.length]).sort(), [
      [0, 1],
      [1, 0],
    ]);
  });

  test('operations run, and a cut of every stream leaves the cache exact', async () => {
    const record = await createOperationClient({ gatewayUrl: stack.gateway.httpUrl }).submitAndWait({
      account: 'sandbox',
      id: '',
      timeout: { seconds: 30n },
      spec: { case: 'scale', value: { kind: 'Deployment', namespace: 'demo', name: 'web', replicas: 2 } },
    });
    assert.equal(record.state, OperationState.SUCCEEDED, `${OperationState[record.state]} ${describeFailure(record)}`);
    stack.proxy.cutAll();
    stack.sandbox.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-cut-2c', namespace: 'demo' } });
    await waitForCacheToMatch(stack.gateway.database, stack.sandbox, 'sandbox', { timeoutMs: 30_000 });
  });
});
