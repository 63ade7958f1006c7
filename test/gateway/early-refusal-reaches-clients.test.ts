/**
 * A refusal sent before the body is read reaches ordinary clients as the gateway's answer (docs/security.md, "No work
 * before authentication"): connect-node's own HTTP/1.1 transport and fetch, posting bodies up to a few MiB without
 * credentials to a gateway in another process (in one process the race does not show), see 401 / Unauthenticated every
 * time — never `write EPIPE` or a reset, which is what they saw while the gateway closed such a connection with the
 * body still arriving.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { OperationService } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { type OutpostProcess, startGatewayProcess } from '../../testkit/outpost-process.js';

const TOKEN = 'writer-token-0123456789abcdef';
let dir: string;
let gateway: OutpostProcess;
let httpUrl: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'outpost-refusal-'));
  ({ gateway, httpUrl } = await startGatewayProcess(dir, {
    id: 'gw-refusal',
    host: '127.0.0.1',
    httpPort: 0,
    grpcPort: 0,
    database: 'memory://',
    web: { enabled: false },
    auth: { tokens: [{ subject: 'writer', token: TOKEN }] },
    authorization: { rules: [{ kind: 'token', subject: '^writer$', roles: ['read', 'write'], accounts: ['^a$'] }] },
  }));
});

after(async () => {
  await gateway?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const manifest = (bytes: number) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  k: "${'x'.repeat(bytes)}"\n`;

test('connect-node over HTTP/1.1 sees Unauthenticated every time, whatever the body size', async () => {
  const client = createClient(OperationService, createConnectTransport({ baseUrl: httpUrl, httpVersion: '1.1' }));
  const outcomes = new Map<string, number>();
  for (let i = 0; i < 10; i++) {
    for (const bytes of [100, 64 * 1024, 1024 * 1024, 3 * 1024 * 1024]) {
      const key = await client.submitOperation({ account: 'a', spec: { case: 'apply', value: { manifests: manifest(bytes) } } }).then(
        () => 'answered',
        (err) => {
          const ce = ConnectError.from(err);
          return `${Code[ce.code]}: ${ce.rawMessage}`;
        },
      );
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }
  }
  assert.deepEqual(
    [...outcomes.keys()],
    ['Unauthenticated: authentication required: present a bearer token (Authorization: Bearer <token>)'],
  );
});

test('fetch sees the 401 with its JSON body every time', async () => {
  const statuses = new Map<string, number>();
  for (let i = 0; i < 10; i++) {
    for (const bytes of [100, 1024 * 1024, 3 * 1024 * 1024]) {
      const key = await fetch(`${httpUrl}/outpost.api.v1.OperationService/SubmitOperation`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ account: 'a', apply: { manifests: manifest(bytes) } }),
      }).then(
        async (res) => `${res.status} ${(await res.json()).code}`,
        (err: Error) => `${err.message}: ${String((err.cause as Error | undefined)?.message)}`,
      );
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
  }
  assert.deepEqual([...statuses.keys()], ['401 unauthenticated']);
});
