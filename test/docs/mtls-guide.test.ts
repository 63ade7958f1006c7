/**
 * Runs docs/mtls.md: every ```sh block, in order, with bash in an empty directory (real openssl), then starts a
 * gateway with the guide's gateway YAML and checks that a client holding the agent certificate is admitted, one
 * without a certificate is refused with UNAUTHENTICATED, and the real agent connects with the guide's agent YAML.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { loadAgentConfig, startAgent } from '../../src/agent/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { Code, grpcAgentStream, grpcRead, restCall, startAuthGateway } from '../../testkit/auth-helpers.js';
import { eventually } from '../../testkit/eventually.js';

const guide = readFileSync(fileURLToPath(new URL('../../docs/mtls.md', import.meta.url)), 'utf8');

/** The bodies of the fenced blocks of one language, in order. */
function blocks(lang: string): string[] {
  return [...guide.matchAll(/^```(\S*)\n([\s\S]*?)^```$/gm)].filter((m) => m[1] === lang).map((m) => m[2]!);
}

test('the mTLS guide: its openssl commands produce files a gateway and an agent accept', async () => {
  const sh = blocks('sh');
  assert.ok(sh.length >= 4, 'the guide has its sh blocks');
  const yamlBlocks = blocks('yaml').map((text) => parseYaml(text) as Record<string, any>);
  const gatewayYaml = yamlBlocks.find((y) => y.tls !== undefined);
  const agentYaml = yamlBlocks.find((y) => y.clouddriver !== undefined);
  assert.ok(gatewayYaml && agentYaml, 'the guide has a gateway and an agent YAML block');

  const dir = mkdtempSync(join(tmpdir(), 'outpost-mtls-guide-'));
  const inDir = (file: string) => (isAbsolute(file) ? file : join(dir, file));
  try {
    writeFileSync(join(dir, 'guide.sh'), `set -euo pipefail\n${sh.join('\n')}`);
    execFileSync('bash', ['guide.sh'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    for (const f of ['ca.pem', 'gateway.pem', 'gateway-key.pem', 'agent-eu-1.pem', 'agent-eu-1-key.pem'])
      assert.ok(existsSync(join(dir, f)), f);

    const tls = {
      ...gatewayYaml.tls,
      certFile: inDir(gatewayYaml.tls.certFile),
      keyFile: inDir(gatewayYaml.tls.keyFile),
      caFile: inDir(gatewayYaml.tls.caFile),
    };
    const gw = await startAuthGateway({ tls, authorization: gatewayYaml.authorization });
    try {
      const pem = (f: string) => readFileSync(join(dir, f), 'utf8');
      const agentId = { ca: pem('ca.pem'), cert: pem('agent-eu-1.pem'), key: pem('agent-eu-1-key.pem') };
      assert.deepEqual(await grpcAgentStream(gw.gateway.grpcUrl, agentId, 'eu-prod'), { code: 'ok', message: '' });
      const anonymous = await grpcAgentStream(gw.gateway.grpcUrl, { ca: agentId.ca }, 'eu-prod');
      assert.equal(anonymous.code, Code.Unauthenticated);
      assert.match(anonymous.message, /none was presented/);
      // the agent certificate carries the agent role only
      assert.equal((await grpcRead(gw.gateway.grpcUrl, agentId)).code, Code.PermissionDenied);
      assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/health', { ca: agentId.ca })).status, 200);
      assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { ca: agentId.ca })).status, 401);

      // the real agent, with the guide's agent YAML (pointed at this gateway and a sandbox cluster)
      const sandbox = await startSandbox({ seed: 'demo', logger: createSilentLogger() });
      try {
        await sandbox.writeKubeconfig(join(dir, 'kubeconfig'));
        const cd = agentYaml.clouddriver;
        const agentConfig = {
          ...agentYaml,
          clouddriver: {
            ...cd,
            grpc: `127.0.0.1:${new URL(gw.gateway.grpcUrl).port}`,
            tls: {
              ...cd.tls,
              cacertFile: inDir(cd.tls.cacertFile),
              clientCertFile: inDir(cd.tls.clientCertFile),
              clientKeyFile: inDir(cd.tls.clientKeyFile),
            },
          },
          agent: { id: 'agent-eu-1' },
          server: { port: 0 },
          kubernetes: {
            accounts: agentYaml.kubernetes.accounts.map((a: Record<string, unknown>) => ({
              ...a,
              kubeconfigFile: join(dir, 'kubeconfig'),
            })),
          },
        };
        writeFileSync(join(dir, 'agent.json.yaml'), JSON.stringify(agentConfig));
        const agent = await startAgent(loadAgentConfig(join(dir, 'agent.json.yaml'), {}), { logger: createSilentLogger() });
        try {
          await eventually(
            'the agent connected with a session',
            async () => agent.status().connected && agent.status().sessionId !== undefined,
            { timeoutMs: 30_000 },
          );
        } finally {
          await agent.close();
        }
      } finally {
        await sandbox.close();
      }
    } finally {
      await gw.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
