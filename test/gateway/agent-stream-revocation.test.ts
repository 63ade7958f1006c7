/**
 * Revocation of static tokens kept in token files, over real HTTP/2 agent streams: deleting, emptying or changing the
 * file revokes the old token at once for new requests AND ends the live streams opened with it UNAUTHENTICATED, while
 * a stream opened with another token lives on; a token written back to the file works again. WatchFleet (a long
 * server stream over Connect) ends the same way.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { FleetService } from '../../src/gen/outpost/api/v1/fleet_service_pb.js';
import { OperationService } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { Code, connectAgent, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';

const FILE_TOKEN = 'file-token-0123456789-abcdef';
const NEW_FILE_TOKEN = 'file-token-rotated-0123456789';
const INLINE_TOKEN = 'inline-token-0123456789-abcdef';
/** Bounds a hang only: revocation is checked every 2 s. */
const WAIT_MS = 20_000;

function endedWithin(s: TestAgentStream, ms: number) {
  return Promise.race([s.ended, new Promise<'alive'>((r) => setTimeout(() => r('alive'), ms).unref())]);
}

/**
 * Runs a server stream opened with the file token, deletes the token file once the first message arrived, and
 * returns how the stream ended (`alive` when it did not end within {@link WAIT_MS}).
 */
async function endAfterDeletingTheFile(
  tokenFile: string,
  stream: (signal: AbortSignal) => AsyncIterable<unknown>,
): Promise<ConnectError | undefined | 'alive'> {
  const abort = new AbortController();
  let first!: () => void;
  const gotFirst = new Promise<void>((r) => (first = r));
  const ended = (async () => {
    try {
      for await (const _ of stream(abort.signal)) first();
      return undefined;
    } catch (err) {
      return ConnectError.from(err);
    }
  })();
  await gotFirst;
  unlinkSync(tokenFile);
  const err = await Promise.race([ended, new Promise<'alive'>((r) => setTimeout(() => r('alive'), WAIT_MS).unref())]);
  abort.abort();
  return err;
}

for (const driver of testDrivers()) {
  describe(`token file revocation (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let dir: string;
    let tokenFile: string;
    const streams: TestAgentStream[] = [];
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'outpost-revocation-'));
      tokenFile = join(dir, 'token');
      writeFileSync(tokenFile, `${FILE_TOKEN}\n`);
      t = await startTestGateway(driver, {
        insecure: false,
        agents: { heartbeatIntervalSeconds: 0.5, deadAfterSeconds: 60 },
        auth: {
          tokens: [
            { subject: 'agent-file', tokenFile },
            { subject: 'agent-inline', token: INLINE_TOKEN },
          ],
        },
        authorization: {
          rules: [{ kind: 'token', subject: '^agent-(file|inline)$', roles: ['agent', 'read', 'write'], accounts: ['rev-*'] }],
        },
      });
    });
    after(async () => {
      for (const s of streams) s.abort();
      await t?.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const open = async (bearer: string, agent: string, account: string) => {
      const s = openAgentStream(t.gateway.grpcUrl, { bearer });
      streams.push(s);
      const welcome = await connectAgent(s, agent, [{ name: account }]);
      assert.equal(welcome.accounts[0]!.verdict, Verdict.CACHING);
      return s;
    };
    const refused = async (bearer: string) => {
      const s = openAgentStream(t.gateway.grpcUrl, { bearer });
      streams.push(s);
      const err = await endedWithin(s, WAIT_MS);
      assert.notEqual(err, 'alive');
      assert.equal((err as { code: Code }).code, Code.Unauthenticated);
    };

    test('deleting the token file ends the live stream UNAUTHENTICATED and refuses the token; another token lives on; a new token works', async () => {
      const revoked = await open(FILE_TOKEN, 'agent-a', 'rev-a');
      const other = await open(INLINE_TOKEN, 'agent-b', 'rev-b');
      unlinkSync(tokenFile);
      const err = await endedWithin(revoked, WAIT_MS);
      if (err === 'alive') assert.fail('a stream opened with a deleted token must end');
      assert.equal(err?.code, Code.Unauthenticated);
      assert.match(err!.rawMessage, /static token was revoked/);
      await refused(FILE_TOKEN);
      assert.equal(await endedWithin(other, 100), 'alive');

      writeFileSync(tokenFile, `${NEW_FILE_TOKEN}\n`);
      await open(NEW_FILE_TOKEN, 'agent-c', 'rev-c');
      await refused(FILE_TOKEN);
    });

    test('changing or emptying the token file ends the streams of the old token', async () => {
      writeFileSync(tokenFile, `${FILE_TOKEN}\n`);
      const first = await open(FILE_TOKEN, 'agent-d', 'rev-d');
      writeFileSync(tokenFile, `${NEW_FILE_TOKEN}\n`);
      const err = await endedWithin(first, WAIT_MS);
      if (err === 'alive') assert.fail('a stream opened with a replaced token must end');
      assert.equal(err?.code, Code.Unauthenticated);

      const second = await open(NEW_FILE_TOKEN, 'agent-e', 'rev-e');
      writeFileSync(tokenFile, '');
      const err2 = await endedWithin(second, WAIT_MS);
      if (err2 === 'alive') assert.fail('a stream opened with an emptied token must end');
      assert.equal(err2?.code, Code.Unauthenticated);
      await refused(NEW_FILE_TOKEN);
    });

    test('a WatchFleet stream opened with the file token ends UNAUTHENTICATED when the file is deleted', async () => {
      writeFileSync(tokenFile, `${FILE_TOKEN}\n`);
      const client = createClient(FleetService, createConnectTransport({ baseUrl: t.gateway.httpUrl, httpVersion: '1.1' }));
      const err = await endAfterDeletingTheFile(tokenFile, (signal) =>
        client.watchFleet({}, { headers: { authorization: `Bearer ${FILE_TOKEN}` }, signal }),
      );
      if (err === 'alive') assert.fail('WatchFleet opened with a deleted token must end');
      assert.equal(err?.code, Code.Unauthenticated);
      assert.match(err!.rawMessage, /static token was revoked/);
    });

    test('a WaitOperation stream opened with the file token ends UNAUTHENTICATED when the file is deleted', async () => {
      writeFileSync(tokenFile, `${FILE_TOKEN}\n`);
      // An agent (of the other token) that never answers keeps the operation open.
      await open(INLINE_TOKEN, 'agent-ops', 'rev-ops');
      const client = createClient(OperationService, createConnectTransport({ baseUrl: t.gateway.httpUrl, httpVersion: '1.1' }));
      const { operation } = await client.submitOperation(
        {
          account: 'rev-ops',
          timeout: { seconds: 60n },
          spec: {
            case: 'patch',
            value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'x', type: PatchType.MERGE, patch: '{}' },
          },
        },
        { headers: { authorization: `Bearer ${INLINE_TOKEN}` } },
      );
      const err = await endAfterDeletingTheFile(tokenFile, (signal) =>
        client.waitOperation({ id: operation!.id }, { headers: { authorization: `Bearer ${FILE_TOKEN}` }, signal }),
      );
      if (err === 'alive') assert.fail('WaitOperation opened with a deleted token must end');
      assert.equal(err?.code, Code.Unauthenticated);
      assert.match(err!.rawMessage, /static token was revoked/);
    });
  });
}
