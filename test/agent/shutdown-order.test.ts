/**
 * The agent stops its modules (src/agent/modules/module-list.ts) in reverse of their start: the stop signal first
 * (streams, watches and retries end), then the connection loops, the config file watcher, the token source, the
 * account preparation, the operation runners, the Kubernetes clients, the metrics and admin servers last. A start that
 * fails half-way stops only what started. Checked through the names of the closers' steps (StartAgentDeps.onStopStep):
 * the order, never the timing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { agentConfigSchema } from '../../src/agent/config/schema.js';
import { startAgent } from '../../src/agent/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';

const configOf = (metricsPort: number) =>
  agentConfigSchema.parse({
    clouddriver: { grpc: '127.0.0.1:1', insecure: true },
    server: { port: 0, host: '127.0.0.1' },
    prometheus: { enabled: true, port: metricsPort, host: '127.0.0.1' },
    kubernetes: { accounts: [] },
  });

describe('agent shutdown order', () => {
  test('every module stops, in reverse of the start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-agent-order-'));
    const file = join(dir, 'agent.yaml');
    writeFileSync(file, 'clouddriver:\n  grpc: 127.0.0.1:1\n  insecure: true\nkubernetes:\n  accounts: []\n');
    const steps: string[] = [];
    try {
      const agent = await startAgent(configOf(0), { logger: createSilentLogger(), configFile: file, onStopStep: (s) => steps.push(s) });
      await agent.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.deepEqual(steps, [
      'stop signal',
      'connection loop',
      'configuration file watcher',
      'token source',
      'account preparation',
      'operations',
      'kubernetes clients',
      'metrics server',
      'admin server',
    ]);
  });

  test('a start that fails at the metrics port stops only the admin server', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const steps: string[] = [];
    try {
      const port = (taken.address() as { port: number }).port;
      await assert.rejects(startAgent(configOf(port), { logger: createSilentLogger(), onStopStep: (s) => steps.push(s) }));
    } finally {
      taken.close();
    }
    assert.deepEqual(steps, ['admin server']);
  });
});
