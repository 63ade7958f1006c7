/**
 * The image's HEALTHCHECK (scripts/healthcheck.mjs), run as Docker runs it (`node scripts/healthcheck.mjs`, exit code
 * decides) against a real gateway (its /health) and a real agent (its /livez), and against what must fail: a
 * draining-style 503, a port nobody listens on, a URL that is not one.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { parseAgentConfig, startAgent } from '../../src/agent/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { startTestGateway } from '../../testkit/test-gateway.js';
import { ROOT } from './kustomize.js';

function healthcheck(url: string | undefined): Promise<{ code: number; stderr: string }> {
  // Bounds a hang only: a loaded machine may take seconds to answer /health.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, OUTPOST_HEALTHCHECK_TIMEOUT_MS: '20000' };
  if (url !== undefined) env.OUTPOST_HEALTHCHECK_URL = url;
  return new Promise((resolve) => {
    execFile(process.execPath, [`${ROOT}scripts/healthcheck.mjs`], { env, timeout: 60_000 }, (err, _stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr });
    });
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

test('the container health check passes on a gateway /health and an agent /livez, and fails otherwise', async () => {
  const gw = await startTestGateway('pglite');
  const agent = await startAgent(
    parseAgentConfig({ clouddriver: { grpc: '127.0.0.1:1' }, server: { port: 0 }, prometheus: { enabled: false } }, {}),
    {
      logger: createSilentLogger(),
    },
  );
  const unhealthy = createServer((_req, res) => res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":"draining"}'));
  try {
    assert.deepEqual(await healthcheck(`${gw.gateway.httpUrl}/health`), { code: 0, stderr: '' });
    assert.deepEqual(await healthcheck(`http://127.0.0.1:${agent.adminPort}/livez`), { code: 0, stderr: '' });

    const port503 = await listen(unhealthy);
    const draining = await healthcheck(`http://127.0.0.1:${port503}/health`);
    assert.equal(draining.code, 1);
    assert.match(draining.stderr, /answered 503/);

    // Port 1 (tcpmux) has no listener; a port found free and released could be anyone's by the time it is dialled.
    const refused = await healthcheck('http://127.0.0.1:1/health');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /ECONNREFUSED/);

    const bad = await healthcheck('not a url');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /is not a URL/);
  } finally {
    unhealthy.close();
    await agent.close();
    await gw.close();
  }
});
