/**
 * One bad dynamic account stays that account's failure, with the real gateway (both databases), a real agent and the
 * sandbox: a kubeconfig that is missing, not a kubeconfig, outside the directories the agent allows (as written, with
 * `..`, or through a symbolic link) makes that account FAILED with the reason in GetAccount / ListAccounts, while the
 * agent's other accounts keep streaming on the same connection; no file content reaches a log or the database; fixing
 * the definition makes the account serve.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { loadAgentConfig, startAgent } from '../../src/agent/index.js';
import { loadGatewayConfig, startGateway } from '../../src/gateway/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { createLogger } from '../../src/shared/logger.js';
import { createTestDatabase, testDrivers } from '../../testkit/databases.js';
import { captureLogs } from '../../testkit/log-capture.js';
import { eventually } from '../../testkit/eventually.js';

const MARKER = 'AWS_SECRET_ACCESS_KEY=marker-9f2c1d-never-logged';

for (const driver of testDrivers()) {
  describe(`a bad dynamic account fails alone (${driver})`, () => {
    test('missing, unparseable and disallowed kubeconfigs fail their account only; nothing of the files is logged or stored', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'outpost-dyn-fail-'));
      const outside = mkdtempSync(join(tmpdir(), 'outpost-dyn-outside-'));
      const sandbox = await startSandbox({ seed: 'demo', bookmarkIntervalMs: 200 });
      const testDb = await createTestDatabase(driver);
      const gatewayLogs = captureLogs();
      const gateway = await startGateway(
        loadGatewayConfig({
          env: {},
          overrides: { httpPort: 0, grpcPort: 0, host: '127.0.0.1', database: testDb.url, id: 'gw-dyn', insecure: true },
        }),
        { logger: createLogger({ level: 'debug', destination: gatewayLogs.stream }) },
      );
      const agentDir = join(dir, 'agent');
      mkdirSync(agentDir);
      const kubeconfig = join(agentDir, 'kubeconfig');
      await sandbox.writeKubeconfig(kubeconfig);
      // A working kubeconfig outside the allowed directory: had the agent read it, the account would serve.
      const foreign = join(outside, 'kubeconfig');
      await sandbox.writeKubeconfig(foreign);
      const environ = join(agentDir, 'environ');
      writeFileSync(environ, `${MARKER}\nHOME=/root: [unclosed\n  - {\n`);
      symlinkSync(foreign, join(agentDir, 'link'));
      const configFile = join(agentDir, 'agent.yaml');
      writeFileSync(
        configFile,
        JSON.stringify({
          clouddriver: {
            grpc: new URL(gateway.grpcUrl).host,
            insecure: true,
            reconnect: { baseSeconds: 0.05, factor: 1.6, maxSeconds: 0.5 },
          },
          agent: { id: 'dyn-agent', zone: 'z1' },
          server: { port: 0 },
          kubernetes: {
            accounts: [{ name: 'alpha', kubeconfigFile: kubeconfig, context: 'sandbox', namespaces: ['demo'], kinds: ['ConfigMap'] }],
          },
        }),
      );
      const agentLogs = captureLogs();
      const agent = await startAgent(loadAgentConfig(configFile, {}), {
        configFile,
        env: {},
        logger: createLogger({ level: 'debug', destination: agentLogs.stream }),
      });
      const rest = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${gateway.httpUrl}${path}`, {
          method,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      };
      const account = async (name: string) => (await rest('GET', `/armory/accounts/${name}`)).body;
      const dynamic = (name: string, kubeconfigFile: string) => ({
        name,
        kubeconfigFile,
        context: 'sandbox',
        zoneId: 'z1',
        namespaces: ['demo'],
        kinds: ['ConfigMap'],
      });
      try {
        await eventually('alpha active', async () => (await account('alpha')).state === 'ACTIVE');
        const sessions = async () =>
          (await gateway.database.db.execute(sql.raw(`select id from agent_sessions where agent_id = 'dyn-agent'`))) as unknown;
        const rowsOf = (r: unknown) => ((r as { rows?: unknown[] }).rows ?? (r as unknown[])) as { id: string }[];
        // The account turns ACTIVE during admission, a moment before the session row is written: wait for the row.
        const before = await eventually('the session row written', async () => {
          const ids = rowsOf(await sessions()).map((r) => r.id);
          return ids.length > 0 ? ids : undefined;
        });

        const put = await rest('PUT', '/armory/accounts/dynamic', [
          dynamic('dyn-good', kubeconfig),
          dynamic('dyn-missing', join(agentDir, 'no-such-kubeconfig')),
          dynamic('dyn-garbage', environ),
          dynamic('dyn-outside', foreign),
          dynamic('dyn-dotdot', join(agentDir, '..', '..', outside.split('/').pop()!, 'kubeconfig')),
          dynamic('dyn-link', join(agentDir, 'link')),
        ]);
        assert.equal(put.status, 200, JSON.stringify(put.body));
        await eventually('the good dynamic account active', async () => (await account('dyn-good')).state === 'ACTIVE');
        const expected: Record<string, RegExp> = {
          'dyn-missing': /the agent cannot serve it: .*kubeconfig \S+no-such-kubeconfig does not exist/,
          'dyn-garbage': /the agent cannot serve it: .*kubeconfig \S+environ is not a valid kubeconfig file/,
          'dyn-outside': /the agent cannot serve it: kubeconfig \S+ is not under an allowed directory/,
          'dyn-dotdot': /the agent cannot serve it: kubeconfig \S+ is not under an allowed directory/,
          'dyn-link': /the agent cannot serve it: kubeconfig \S+link leads outside the allowed directories/,
        };
        for (const [name, reason] of Object.entries(expected)) {
          const row = await eventually(`${name} failed`, async () => {
            const a = await account(name);
            return a.state === 'FAILED' ? a : undefined;
          });
          assert.match(row.reason, reason, name);
        }
        // Visible in the list too, and the agent's other accounts go on, on the very same stream.
        const list = await rest('GET', '/armory/accounts');
        const states = Object.fromEntries((list.body.items as { name: string; state: string }[]).map((a) => [a.name, a.state]));
        assert.equal(states.alpha, 'ACTIVE');
        assert.equal(states['dyn-good'], 'ACTIVE');
        assert.equal(states['dyn-outside'], 'FAILED');
        assert.deepEqual(
          rowsOf(await sessions()).map((r) => r.id),
          before,
          'no reconnect: the Hello was never refused',
        );

        // Nothing of the files in a log line or the database.
        const stored = JSON.stringify(
          rowsOf(
            await gateway.database.db.execute(
              sql.raw(`select a.*, t.* from accounts a left join account_transitions t on t.account = a.name`),
            ),
          ),
        );
        for (const [where, text] of [
          ['agent log', agentLogs.text()],
          ['gateway log', gatewayLogs.text()],
          ['database', stored],
        ] as const) {
          assert.ok(!text.includes('marker-9f2c1d'), `${where} holds file content`);
        }

        // Fixing the definition makes it serve.
        await rest('PUT', '/armory/accounts/dynamic', [dynamic('dyn-missing', kubeconfig)]);
        await eventually('the fixed account active', async () => (await account('dyn-missing')).state === 'ACTIVE');
        assert.equal((await account('alpha')).state, 'ACTIVE');
      } finally {
        await agent.close();
        await gateway.close();
        await testDb.drop();
        await sandbox.close();
        rmSync(dir, { recursive: true, force: true });
        rmSync(outside, { recursive: true, force: true });
      }
    });
  });
}
