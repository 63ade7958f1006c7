/**
 * The audit log through a real gateway with token authentication: SubmitOperation calls (accepted and refused) and
 * Clouddriver ops submissions are recorded with the submitting identity, AuditService.ListAuditEvents requires the
 * admin role, filters and pages, and answers INVALID_ARGUMENT for a bad filter.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { AuditService, type AuditEvent } from '../../src/gen/outpost/api/v1/audit_service_pb.js';
import { OperationService } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { eventually } from '../../testkit/eventually.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { startOperationAgent, type OperationAgent } from './operations-helpers.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';

const TOKENS = {
  admin: 'audit-admin-token-0123456789abcdef',
  reader: 'audit-reader-token-0123456789abcdef',
  writer: 'audit-writer-token-0123456789abcdef',
  agent: 'audit-agent-token-0123456789abcdef',
  orca: 'audit-orca-token-0123456789abcdef',
};
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

async function codeOf(promise: Promise<unknown>): Promise<Code | 'OK'> {
  try {
    await promise;
    return 'OK';
  } catch (err) {
    assert.ok(err instanceof ConnectError, String(err));
    return err.code;
  }
}

for (const driver of testDrivers()) {
  describe(`audit log through the gateway (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let agent: OperationAgent;
    let audit: Client<typeof AuditService>;
    let operations: Client<typeof OperationService>;
    before(async () => {
      t = await startTestGateway(driver, {
        insecure: false,
        auth: {
          tokens: Object.entries(TOKENS).map(([subject, token]) => ({
            subject,
            token,
            groups: subject === 'writer' ? ['release-team'] : [],
          })),
        },
        authorization: {
          rules: [
            { kind: 'token', subject: '^admin$', roles: ['read', 'write', 'admin'], accounts: ['*'] },
            { kind: 'token', subject: '^reader$', roles: ['read'], accounts: [] },
            { kind: 'token', subject: '^writer$', roles: ['read', 'write'], accounts: ['*'] },
            { kind: 'token', subject: '^agent$', roles: ['agent'], accounts: ['audit-*'] },
            { kind: 'token', subject: '^orca$', roles: ['spinnaker'], accounts: ['*'] },
          ],
        },
      });
      const transport = createGrpcTransport({ baseUrl: t.gateway.grpcUrl });
      audit = createClient(AuditService, transport);
      operations = createClient(OperationService, transport);
      agent = await startOperationAgent(t.gateway.grpcUrl, 'agent-audit', ['audit-a'], { bearer: TOKENS.agent });
    });
    after(async () => {
      await agent?.close();
      await t?.close();
    });

    /** The events of `principal`, once `count` are there. */
    const eventsOf = (principal: string, count: number): Promise<AuditEvent[]> =>
      eventually(`${count} audit events of ${principal}`, async () => {
        const { events } = await audit.listAuditEvents({ principal }, bearer(TOKENS.admin));
        return events.length === count && events;
      });

    test('an operation submitted with SubmitOperation is recorded with the submitting principal; so is a refused one', async () => {
      const { operation } = await operations.submitOperation(
        {
          account: 'audit-a',
          wait: true,
          spec: {
            case: 'patch',
            value: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'web', name: 'front', type: PatchType.MERGE, patch: '{}' },
          },
        },
        bearer(TOKENS.writer),
      );
      assert.ok(operation?.id);
      const unknown = await codeOf(
        operations.submitOperation(
          {
            account: 'nowhere',
            id: 'audit-refused-1',
            spec: { case: 'scale', value: { kind: 'Deployment', namespace: 'ns', name: 'x', replicas: 2 } },
          },
          bearer(TOKENS.writer),
        ),
      );
      assert.equal(unknown, Code.NotFound);

      const [refused, accepted] = await eventsOf('token:writer', 2);
      assert.deepEqual(
        [accepted!.kind, accepted!.verb, accepted!.account, accepted!.status, accepted!.operationId, accepted!.error],
        ['operation', 'patch', 'audit-a', 200, operation.id, ''],
      );
      assert.deepEqual(
        [accepted!.apiGroup, accepted!.resource, accepted!.namespace, accepted!.name],
        ['apps', 'Deployment', 'web', 'front'],
      );
      assert.equal(accepted!.gatewayId, 'gw-test');
      assert.deepEqual([accepted!.groups, refused!.groups], [['release-team'], ['release-team']], "the caller's groups, on both");
      assert.ok(accepted!.startedAt);
      assert.deepEqual(
        [refused!.verb, refused!.account, refused!.status, refused!.operationId],
        ['scale', 'nowhere', 404, 'audit-refused-1'],
      );
      assert.match(refused!.error, /unknown account/);
    });

    test('a Clouddriver ops submission is recorded per description with its task id; a refused one with its HTTP status', async () => {
      const post = (body: unknown) =>
        fetch(`${t.gateway.httpUrl}/kubernetes/ops`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKENS.orca}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const refusedRes = await post([
        { scaleManifest: { account: 'not-here', location: 'shop', manifestName: 'deployment cart', replicas: 3 } },
      ]);
      assert.equal(refusedRes.status, 400, await refusedRes.text());
      const [refused] = await eventsOf('token:orca', 1);
      assert.deepEqual(
        [refused!.kind, refused!.verb, refused!.account, refused!.status, refused!.namespace, refused!.resource, refused!.name],
        ['operation', 'scaleManifest', 'not-here', 400, 'shop', 'deployment', 'cart'],
      );
      assert.match(refused!.error, /not known/);

      const acceptedRes = await post([
        { scaleManifest: { account: 'audit-a', location: 'web', manifestName: 'deployment front', replicas: 2 } },
      ]);
      assert.equal(acceptedRes.status, 200);
      const { id: taskId } = (await acceptedRes.json()) as { id: string };
      const [accepted] = await eventsOf('token:orca', 2);
      assert.deepEqual(
        [accepted!.verb, accepted!.account, accepted!.status, accepted!.operationId, accepted!.namespace, accepted!.name, accepted!.error],
        ['scaleManifest', 'audit-a', 200, taskId, 'web', 'front', ''],
      );

      // A description naming its account with `credentials` (as Clouddriver's converters accept) runs on that account,
      // and is audited on it.
      const credentialsRes = await post([
        { scaleManifest: { credentials: 'audit-a', location: 'web', manifestName: 'deployment front', replicas: 1 } },
      ]);
      assert.equal(credentialsRes.status, 200, await credentialsRes.clone().text());
      const { id: credentialsTask } = (await credentialsRes.json()) as { id: string };
      const [byCredentials] = await eventsOf('token:orca', 3);
      assert.deepEqual([byCredentials!.account, byCredentials!.operationId], ['audit-a', credentialsTask]);
    });

    test('ListAuditEvents requires the admin role', async () => {
      assert.equal(await codeOf(audit.listAuditEvents({}, bearer(TOKENS.reader))), Code.PermissionDenied);
      assert.equal(await codeOf(audit.listAuditEvents({}, bearer(TOKENS.writer))), Code.PermissionDenied);
      assert.equal(await codeOf(audit.listAuditEvents({})), Code.Unauthenticated);
      assert.equal(await codeOf(audit.listAuditEvents({}, bearer(TOKENS.admin))), 'OK');
    });

    test('ListAuditEvents filters by kind and account, pages newest first, and refuses bad filters', async () => {
      const all = (await audit.listAuditEvents({ kind: 'operation' }, bearer(TOKENS.admin))).events;
      assert.equal(all.length, 5);
      const byAccount = await audit.listAuditEvents({ account: 'audit-a' }, bearer(TOKENS.admin));
      assert.deepEqual(
        byAccount.events.map((e) => [e.account, e.principal]),
        [
          ['audit-a', 'token:orca'],
          ['audit-a', 'token:orca'],
          ['audit-a', 'token:writer'],
        ],
      );
      const first = await audit.listAuditEvents({ pageSize: 2 }, bearer(TOKENS.admin));
      assert.equal(first.events.length, 2);
      const second = await audit.listAuditEvents({ pageSize: 2, pageToken: first.nextPageToken }, bearer(TOKENS.admin));
      assert.equal(second.events.length, 2);
      const third = await audit.listAuditEvents({ pageSize: 2, pageToken: second.nextPageToken }, bearer(TOKENS.admin));
      assert.equal(third.events.length, 1);
      assert.equal(third.nextPageToken, '');
      assert.deepEqual(
        [...first.events, ...second.events, ...third.events].map((e) => e.id),
        all.map((e) => e.id),
      );
      for (const bad of [{ pageSize: -1 }, { pageToken: 'garbage' }, { kind: 'pods' }]) {
        assert.equal(await codeOf(audit.listAuditEvents(bad, bearer(TOKENS.admin))), Code.InvalidArgument, JSON.stringify(bad));
      }
    });
  });
}
