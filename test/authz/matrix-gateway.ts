/**
 * The one gateway every cell of the authorization matrix runs against (PGlite, no insecure mode, static tokens, a
 * replica secret, the matrix's rules, a tiny dashboard build) and the fixtures the table's requests point at: agent
 * streams, a cached ConfigMap, admin-created and dynamic accounts, one operation. Also resolves each identity to the
 * `Authorization` header it sends.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DescService } from '@bufbuild/protobuf';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { SignJWT } from 'jose';
import { EventType } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { OperationService } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createReplicaTokenSigner } from '../../src/gateway/auth/replica-token.js';
import { configMap, connectAgent, event, events, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import {
  FIXTURE,
  FORGED_REPLICA_SECRET,
  JWT_KUBE_GROUPS,
  JWT_SECRET,
  REPLICA_SECRET,
  RULES,
  STATIC_TOKENS,
  TOKEN_CONFIG,
  type IdentityName,
} from './identities.js';
import type { FixtureStream } from './matrix-types.js';
import type { ProbeContext } from './matrix-probes.js';

/** The running matrix gateway with its fixtures. */
export interface MatrixGateway {
  gateway: TestGateway;
  context: ProbeContext;
  /** The `Authorization` header of an identity (undefined for `none`). */
  authorization(identity: IdentityName): string | undefined;
  close(): Promise<void>;
}

/** Starts the gateway and creates the fixtures; `services` are the services it serves (for the probes). */
export async function startMatrixGateway(services: ReadonlyMap<string, DescService>): Promise<MatrixGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-authz-'));
  const streams: TestAgentStream[] = [];
  let gateway: TestGateway | undefined;
  try {
    const replicaSecretFile = join(dir, 'replica-secret');
    const secretsKeyFile = join(dir, 'secrets-keys');
    writeFileSync(secretsKeyFile, `k1:${randomBytes(32).toString('base64')}\n`);
    const forgedSecretFile = join(dir, 'forged-secret');
    writeFileSync(replicaSecretFile, REPLICA_SECRET);
    writeFileSync(forgedSecretFile, FORGED_REPLICA_SECRET);
    const jwtSecretFile = join(dir, 'jwt-secret');
    writeFileSync(jwtSecretFile, JWT_SECRET);
    const web = join(dir, 'web');
    mkdirSync(join(web, 'assets'), { recursive: true });
    writeFileSync(join(web, 'index.html'), '<!doctype html><title>authz</title>');
    writeFileSync(join(web, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(web, 'assets', 'app.js'), 'export {};');

    gateway = await startTestGateway('pglite', {
      id: FIXTURE.gatewayId,
      insecure: false,
      auth: {
        tokens: TOKEN_CONFIG,
        replicaSecretFile,
        jwt: { issuer: 'https://authz.test', audience: 'outpost', secretFile: jwtSecretFile },
      },
      secrets: { keyFile: secretsKeyFile },
      authorization: { rules: RULES },
      web: { enabled: true, dir: web },
    });
    const replicaToken = await createReplicaTokenSigner(replicaSecretFile, 'gw-elsewhere').token();
    const forgedToken = await createReplicaTokenSigner(forgedSecretFile, 'gw-elsewhere').token();
    const headers: Record<IdentityName, string | undefined> = {
      none: undefined,
      badToken: `Bearer ${STATIC_TOKENS.badToken}`,
      forgedReplica: `Bearer ${forgedToken}`,
      reader: `Bearer ${STATIC_TOKENS.reader}`,
      writer: `Bearer ${STATIC_TOKENS.writer}`,
      admin: `Bearer ${STATIC_TOKENS.admin}`,
      agentA: `Bearer ${STATIC_TOKENS.agentA}`,
      agentB: `Bearer ${STATIC_TOKENS.agentB}`,
      replica: `Bearer ${replicaToken}`,
      jwtAdmin: `Bearer ${await jwtToken('admin')}`,
      spinnaker: `Bearer ${STATIC_TOKENS.spinnaker}`,
      kube: `Bearer ${STATIC_TOKENS.kube}`,
      jwtKube: `Bearer ${await jwtToken('kube-jwt', { groups: JWT_KUBE_GROUPS })}`,
    };

    const open = async (bearer: string, agentId: string, account: string) => {
      const stream = openAgentStream(gateway!.gateway.grpcUrl, { bearer });
      streams.push(stream);
      const welcome = await connectAgent(stream, agentId, [{ name: account }]);
      return { stream, session: { id: welcome.sessionId, token: welcome.sessionToken } };
    };
    const [a, resume, b] = await Promise.all([
      open(STATIC_TOKENS.agentA, FIXTURE.agentA.agentId, FIXTURE.agentA.account),
      open(STATIC_TOKENS.agentA, FIXTURE.agentAResume.agentId, FIXTURE.agentAResume.account),
      open(STATIC_TOKENS.agentB, FIXTURE.agentB.agentId, FIXTURE.agentB.account),
    ]);
    // After agent A's stream caches the account: this one stands by for it.
    const standby = await open(STATIC_TOKENS.agentA, FIXTURE.agentAStandby.agentId, FIXTURE.agentAStandby.account);
    await open(STATIC_TOKENS.agentA, FIXTURE.agentAShared.agentId, FIXTURE.agentAShared.account);
    const cm = configMap(FIXTURE.configMap.name, 1, { namespace: FIXTURE.configMap.namespace });
    a.stream.send(events(1, [event(FIXTURE.agentA.account, EventType.ADDED, cm)]));
    await a.stream.waitForAck(1);

    const admin = { authorization: headers.admin!, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(new URL(path, gateway!.gateway.httpUrl), { method: 'POST', headers: admin, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`fixture POST ${path}: ${res.status} ${await res.text()}`);
    };
    await post(
      '/armory/accounts',
      FIXTURE.adminAccounts.map((name) => ({ name, kubeconfigFile: '/k' })),
    );
    await post(
      '/armory/accounts/dynamic',
      FIXTURE.dynamicAccounts.map((name) => ({ name, kubeconfigFile: '/k', zoneId: 'elsewhere' })),
    );
    const operations = createClient(OperationService, createConnectTransport({ baseUrl: gateway.gateway.httpUrl, httpVersion: '1.1' }));
    for (const id of [FIXTURE.operationId, FIXTURE.answeredOperationId, FIXTURE.forgedOperationId]) {
      await operations.submitOperation(
        {
          account: FIXTURE.agentA.account,
          id,
          // A stored kind (reads are not stored): a merge patch of ConfigMap x.
          spec: {
            case: 'patch',
            value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'x', type: PatchType.MERGE, patch: '{"data":{}}' },
          },
        },
        { headers: { authorization: headers.writer! } },
      );
      if ((await a.stream.next()).message.case !== 'operation') throw new Error(`fixture: operation ${id} not sent to agent A`);
    }
    const secret = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: authz-secret\n  namespace: default\nstringData:\n  password: ${FIXTURE.secretValue}\n`;
    await operations.submitOperation(
      { account: FIXTURE.agentA.account, id: FIXTURE.secretOperationId, spec: { case: 'apply', value: { manifests: secret } } },
      { headers: { authorization: headers.writer! } },
    );
    if ((await a.stream.next()).message.case !== 'operation') throw new Error('fixture: the Secret operation was not sent to agent A');

    const sessions: Record<FixtureStream, { id: string; token: string }> = {
      agentA: a.session,
      agentAResume: resume.session,
      agentAStandby: standby.session,
      agentB: b.session,
    };
    const running = gateway;
    const fixtureStreams: Record<FixtureStream, TestAgentStream> = {
      agentA: a.stream,
      agentAResume: resume.stream,
      agentAStandby: standby.stream,
      agentB: b.stream,
    };
    return {
      gateway: running,
      context: {
        httpUrl: running.gateway.httpUrl,
        grpcUrl: running.gateway.grpcUrl,
        services,
        sessions,
        sendResult: (stream, result) => fixtureStreams[stream].send({ case: 'operationResult', value: result }),
        readerAuthorization: headers.reader!,
      },
      authorization: (identity) => headers[identity],
      async close() {
        for (const s of streams) s.abort();
        await running.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const s of streams) s.abort();
    await gateway?.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** A JWT for `sub: subject` with `claims`, valid for an hour (the matrix runs well within it). */
function jwtToken(subject: string, claims: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('https://authz.test')
    .setAudience('outpost')
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));
}
