/**
 * The agent's account changes against the real gateway (PGlite) and the sandbox: a config-file reload and a dynamic
 * account created and deleted over REST reach the gateway, and the gateway's verdicts drive the agent's watches.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger } from '../../src/shared/logger.js';
import { captureLogs } from '../../testkit/log-capture.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack } from '../../testkit/stack.js';

test('config reload and a REST dynamic account round trip with the real gateway', async () => {
  const stack = await startStack({ persistent: true, sandbox: { bookmarkIntervalMs: 200 } });
  const { gateway, kubeconfig: kubeconfigFile } = stack;
  const configFile = join(stack.dir, 'agent.yaml');
  const account = (name: string, kinds: string[]) => ({ name, kubeconfigFile, context: 'sandbox', namespaces: ['demo'], kinds });
  const config = (accounts: object[]) => ({
    clouddriver: { grpc: stack.proxy.address, insecure: true, reconnect: { baseSeconds: 0.05, factor: 1.6, maxSeconds: 0.5 } },
    agent: { id: 'e2e-agent', zone: 'test' },
    server: { port: 0 },
    kubernetes: { accounts },
  });
  const logs = captureLogs();
  const agent = await stack.startAgent({
    id: 'e2e-agent',
    config: config([account('alpha', ['ConfigMap'])]),
    configFile,
    configPollMs: 200,
    logger: createLogger({ level: 'debug', destination: logs.stream }),
  });
  const status = (name: string) => agent.status().accounts.find((a) => a.name === name);
  const rest = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gateway.httpUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  try {
    await eventually('alpha watching', () => status('alpha')?.watches.some((w) => w.state === 'watching'));
    const alphaStarted = status('alpha')!.watches[0]!.startedAt;

    // Config reload: beta added; the gateway admits it and the agent streams it, alpha untouched.
    writeFileSync(configFile, JSON.stringify(config([account('alpha', ['ConfigMap']), account('beta', ['Service'])])));
    await eventually(
      'beta caching',
      () => status('beta')?.verdict === 'caching' && status('beta')!.watches.some((w) => w.state === 'watching'),
    );
    assert.equal((await rest('GET', '/armory/accounts/beta')).status, 200);
    assert.equal(status('alpha')!.watches[0]!.startedAt, alphaStarted, 'alpha watch not restarted');

    // Dynamic account over REST: the gateway pushes ADD to the agent of the zone, which prepares and streams it.
    const put = await rest('PUT', '/armory/accounts/dynamic', [
      { name: 'dyn', kubeconfigFile, context: 'sandbox', namespaces: ['demo'], kinds: ['Deployment.apps'], zoneId: 'test' },
    ]);
    assert.ok(put.status === 200 || put.status === 201, JSON.stringify(put.body));
    await eventually(
      'dyn caching',
      () => status('dyn')?.verdict === 'caching' && status('dyn')!.watches.some((w) => w.kind === 'Deployment' && w.state === 'watching'),
    );
    assert.equal(status('dyn')!.source, 'dynamic');

    // Deleting it over REST stops it on the agent; the file accounts stay.
    const deleted = await rest('DELETE', '/armory/accounts/dyn');
    assert.ok(deleted.status < 300, JSON.stringify(deleted.body));
    await eventually('dyn removed from the agent', () => status('dyn') === undefined);
    assert.deepEqual(
      agent.status().accounts.map((a) => [a.name, a.verdict]),
      [
        ['alpha', 'caching'],
        ['beta', 'caching'],
      ],
    );
    assert.equal(status('alpha')!.watches[0]!.startedAt, alphaStarted, 'alpha watch still not restarted');
    assert.equal(agent.status().sessionId !== undefined, true);
  } finally {
    await stack.close();
  }
});
