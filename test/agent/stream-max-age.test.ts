/**
 * The real agent against the real gateway (PGlite) and the sandbox, with a short `agents.maxStreamAgeSeconds`: the
 * gateway ends each stream at its (jittered) maximum age; the agent reconnects at once — not after a backoff delay,
 * and not logged as a lost stream — resumes its session, its watches go on from the resume points without listing
 * again, and the account is ACTIVE after every reconnect.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { loadAgentConfig, startAgent } from '../../src/agent/index.js';
import { loadGatewayConfig, startGateway } from '../../src/gateway/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { createLogger, createSilentLogger } from '../../src/shared/logger.js';
import { captureLogs } from './helpers/harness.js';
import { eventually } from '../../testkit/eventually.js';

const MAX_AGE = 2.5;

test('at its maximum age the stream ends; the agent reconnects at once, resumes its session and does not list again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-agent-max-age-'));
  const sandbox = await startSandbox({ seed: 'demo', bookmarkIntervalMs: 200 });
  const kubeconfigFile = join(dir, 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfigFile);
  const gateway = await startGateway(
    loadGatewayConfig({
      env: {},
      overrides: {
        httpPort: 0,
        grpcPort: 0,
        host: '127.0.0.1',
        database: join(dir, 'db'),
        id: 'gw-1',
        insecure: true,
        agents: { maxStreamAgeSeconds: MAX_AGE },
      },
    }),
    { logger: createSilentLogger() },
  );
  const configFile = join(dir, 'agent.yaml');
  writeFileSync(
    configFile,
    JSON.stringify({
      clouddriver: {
        grpc: new URL(gateway.grpcUrl).host,
        insecure: true,
        // A failure would wait up to 20 s (full jitter): the reconnects below must not go through the backoff.
        reconnect: { baseSeconds: 20, factor: 2, maxSeconds: 60 },
      },
      agent: { id: 'max-age-agent', zone: 'test' },
      server: { port: 0 },
      kubernetes: { accounts: [{ name: 'alpha', kubeconfigFile, context: 'sandbox', namespaces: ['demo'], kinds: ['ConfigMap'] }] },
    }),
  );
  const logs = captureLogs();
  const agent = await startAgent(loadAgentConfig(configFile, {}), {
    configFile,
    env: {},
    logger: createLogger({ level: 'debug', destination: logs.stream }),
  });
  const alpha = () => agent.status().accounts.find((a) => a.name === 'alpha');
  const query = async (text: string) => {
    const result = await gateway.database.db.execute(sql.raw(text));
    return Array.from((result as unknown as { rows?: Record<string, unknown>[] }).rows ?? (result as unknown as Record<string, unknown>[]));
  };
  const watchStates = () =>
    query(`select sync_gen, synced, resource_version from watch_states where account = 'alpha' order by kind, watch_namespace`);
  const welcomes = () => logs.lines().filter((l) => l.msg === 'welcomed by the gateway');
  try {
    await eventually('alpha watching', () => alpha()?.watches.some((w) => w.state === 'watching'));
    await eventually('the first list stored', async () =>
      (await watchStates()).some((r) => r.synced === true && r.resource_version !== ''),
    );
    const listed = await watchStates();
    assert.equal(welcomes().length, 1, 'the first session must be set up before its maximum age (slow machine?)');

    // Two maximum ages: two reconnects, each resuming the session before it.
    await eventually('two reconnects after the maximum age', () => welcomes().length >= 3, { timeoutMs: MAX_AGE * 1100 * 2 + 5000 });
    const all = welcomes();
    for (let i = 1; i < all.length; i++) {
      assert.equal(all[i]!.resumed, all[i - 1]!.sessionId, `welcome ${i} resumed the previous session`);
      const gap = (all[i]!.time as number) - (all[i - 1]!.time as number);
      assert.ok(gap >= MAX_AGE * 900 - 100 && gap <= MAX_AGE * 1100 + 1500, `session ${i} lasted ${gap} ms`);
    }
    const text = logs.text();
    assert.match(text, /the gateway asked for a reconnect; reconnecting now/);
    assert.equal(/lost the gateway stream|cannot connect to the gateway/.test(text), false, 'a maximum-age end is not a failure');

    await eventually('alpha watching again', () => alpha()?.verdict === 'caching' && alpha()!.watches.every((w) => w.state === 'watching'));
    const [account] = await query(`select state from accounts where name = 'alpha'`);
    assert.equal(account?.state, 'ACTIVE');
    // Resumed from the stored resource versions: no new full list (a list would start a new generation).
    assert.deepEqual(
      (await watchStates()).map((r) => r.sync_gen),
      listed.map((r) => r.sync_gen),
    );
  } finally {
    await agent.close();
    await gateway.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
