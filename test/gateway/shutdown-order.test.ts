/**
 * The gateway stops its parts in one order (docs/architecture.md, "Inside the gateway", and the doc comment of
 * src/gateway/modules/module-list.ts): drain first; Spinnaker tasks before the operations they wait on; operation timers
 * and waiters, then the modules' timers, then the watch streams and forwarded kubectl requests, before the servers and
 * agent streams; the core's parts after them, the audit log after everything that records into it, the database last.
 * Checked through the names of the closers' steps as they run (GatewayDeps.onStopStep): the order, never the timing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startGateway, type GatewayConfigInput } from '../../src/gateway/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase } from '../../testkit/databases.js';
import { testGatewayConfig } from '../../testkit/test-gateway.js';

/** The shutdown steps of a gateway with the default features, in the order they run. */
const DEFAULT_ORDER = [
  'drain',
  'Spinnaker tasks',
  'operations',
  'audit purge',
  'account sweeper',
  'account cleanup',
  'lease keeper',
  'health',
  'fleet monitor',
  'history writer',
  'forwarded kubectl requests',
  'servers and agent streams',
  'operations (recovered, not serving yet)',
  'reads',
  'audit log',
  'replica directory',
  'peer client',
  'sealing of legacy requests',
  'authenticator',
  'database',
];

/** Starts a gateway on a fresh database, closes it at once, and returns the shutdown steps in the order they ran. */
async function stopSteps(overrides: GatewayConfigInput = {}): Promise<string[]> {
  const testDb = await createTestDatabase('pglite');
  const steps: string[] = [];
  try {
    const gateway = await startGateway(testGatewayConfig(testDb.url, overrides), {
      logger: createSilentLogger(),
      onStopStep: (step) => steps.push(step),
    });
    await gateway.close();
  } finally {
    await testDb.drop();
  }
  return steps;
}

describe('gateway shutdown order', () => {
  test('the default gateway stops drain first, the serving parts before the servers, the database last', async () => {
    assert.deepEqual(await stopSteps(), DEFAULT_ORDER);
  });

  test('with auth.oidc, the purge of dashboard sessions stops right after the drain (sign-in comes late in the list)', async () => {
    const oidc = { providers: [{ name: 'corp', issuer: 'https://idp.example.com', clientId: 'outpost' }] };
    assert.deepEqual(await stopSteps({ auth: { oidc } }), ['drain', 'dashboard session purge', ...DEFAULT_ORDER.slice(1)]);
  });

  test('a disabled Spinnaker module has no step; the others keep their order', async () => {
    assert.deepEqual(
      await stopSteps({ spinnaker: { enabled: false } } as GatewayConfigInput),
      DEFAULT_ORDER.filter((s) => s !== 'Spinnaker tasks'),
    );
  });
});
