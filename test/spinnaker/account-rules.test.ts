/**
 * `authorization.rules[].accounts` narrows every account-scoped role (docs/security.md, "Authorization"), Spinnaker's
 * and the write role included: a Clouddriver caller whose rule lists account `sandbox` cannot deploy to, read, list or
 * poll the tasks of account `second`; a writer whose rule lists `sandbox` cannot submit operations to `second`; and a
 * rule whose `accounts` would do nothing (only unscoped roles), or a scoped role without accounts, is refused by the
 * configuration instead of being ignored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, ConnectError, Code } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { OperationService } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { loadGatewayConfig } from '../../src/gateway/index.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { createOrcaClient, type OrcaClient } from './orca-client.js';

const TOKENS = {
  agent: 'rules-agent-token-0123456789abcdef',
  orcaSandbox: 'rules-orca-sandbox-token-0123456789',
  orcaAll: 'rules-orca-all-token-0123456789abcd',
  writerSandbox: 'rules-writer-sandbox-token-0123456789',
};

describe('account rules of the spinnaker and write roles', { concurrency: false }, () => {
  let stack: Stack;
  let narrow: OrcaClient;
  let wide: OrcaClient;

  before(async () => {
    stack = await startStack({
      gateway: {
        insecure: false,
        auth: {
          readAccess: 'open',
          tokens: [
            { subject: 'agent', token: TOKENS.agent },
            { subject: 'orca-sandbox', token: TOKENS.orcaSandbox },
            { subject: 'orca-all', token: TOKENS.orcaAll },
            { subject: 'writer-sandbox', token: TOKENS.writerSandbox },
          ],
        },
        authorization: {
          rules: [
            { kind: 'token', subject: '^agent$', roles: ['agent'], accounts: ['*'] },
            { kind: 'token', subject: '^orca-sandbox$', roles: ['spinnaker'], accounts: ['sandbox'] },
            { kind: 'token', subject: '^orca-all$', roles: ['spinnaker'], accounts: ['*'] },
            { kind: 'token', subject: '^writer-sandbox$', roles: ['read'], accounts: [] },
            { kind: 'token', subject: '^writer-sandbox$', roles: ['write'], accounts: ['sand*'] },
          ],
        },
      },
      agents: [
        {
          accounts: [{ name: 'sandbox' }, { name: 'second' }],
          config: { clouddriver: { auth: { token: TOKENS.agent } } },
        },
      ],
    });
    narrow = createOrcaClient(stack.gateway.httpUrl, { authorization: `Bearer ${TOKENS.orcaSandbox}` });
    wide = createOrcaClient(stack.gateway.httpUrl, { authorization: `Bearer ${TOKENS.orcaAll}` });
  });
  after(async () => {
    await stack?.close();
  });

  const scale = (account: string) => ({
    scaleManifest: { account, manifestName: 'deployment web', location: 'demo', replicas: 2 },
  });

  test('a deploy to an account the spinnaker rule does not list is a 400 that creates no task', async () => {
    const refused = await narrow.post([scale('second')], 'rules-refused-1');
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.match(String(refused.body.message), /orca-sandbox may not reach account "second" \(authorization\.rules: the spinnaker role/);
    // The same request id from a caller that may: a new task, so the refused one stored nothing under it.
    const outcome = await wide.monitor(await wide.submit([scale('second')], 'rules-refused-1'), false);
    assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
  });

  test('an account the rule lists still works', async () => {
    const outcome = await narrow.monitor(await narrow.submit([scale('sandbox')]), false);
    assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
  });

  test('a task is readable only by callers whose rules reach every one of its accounts', async () => {
    const id = await wide.submit([scale('second')]);
    const byNarrow = await narrow.get(`/task/${id}`);
    assert.equal(byNarrow.status, 403, JSON.stringify(byNarrow.body));
    assert.match(String(byNarrow.body.message), /touches account "second"/);
    assert.equal((await narrow.get(`/kubernetes/task/${id}`)).status, 403);
    assert.equal((await wide.get(`/task/${id}`)).status, 200);
    const own = await narrow.submit([scale('sandbox')]);
    assert.equal((await narrow.get(`/task/${own}`)).status, 200);
  });

  test('manifests, jobs and credentials of an unlisted account are not readable, nor listed', async () => {
    const manifest = await narrow.manifest('second', 'demo', 'deployment web');
    assert.equal(manifest.status, 403, JSON.stringify(manifest.body));
    assert.equal((await wide.manifest('second', 'demo', 'deployment web')).status, 200);
    assert.equal((await narrow.get('/applications/app/jobs/second/demo/job%20x')).status, 404);
    assert.equal((await narrow.get('/credentials/second')).status, 404);
    const listed = (await narrow.get('/credentials')).body as unknown as { name: string }[];
    assert.deepEqual(
      listed.map((a) => a.name),
      ['sandbox'],
    );
    const all = (await wide.get('/credentials')).body as unknown as { name: string }[];
    assert.deepEqual(all.map((a) => a.name).sort(), ['sandbox', 'second']);
  });

  test('SubmitOperation to an account the write rule does not list is PERMISSION_DENIED', async () => {
    const client = createClient(
      OperationService,
      createConnectTransport({
        baseUrl: stack.gateway.httpUrl,
        httpVersion: '1.1',
        interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${TOKENS.writerSandbox}`), next(req))],
      }),
    );
    const get = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'demo', name: 'web' };
    await assert.rejects(
      client.submitOperation({ account: 'second', spec: { case: 'get', value: get } }),
      (err: unknown) =>
        err instanceof ConnectError &&
        err.code === Code.PermissionDenied &&
        /writer-sandbox may not submit operations to account "second"/.test(err.rawMessage),
    );
    const ok = await client.submitOperation({ account: 'sandbox', spec: { case: 'get', value: get } });
    assert.equal(ok.operation?.account, 'sandbox');
  });
});

describe('account rules in the configuration', () => {
  const load = (rule: Record<string, unknown>) =>
    loadGatewayConfig({ env: {}, overrides: { authorization: { rules: [{ kind: 'token', subject: '^x$', ...rule }] } } as never });

  test('a spinnaker, write, kube or agent rule without accounts is refused, naming the roles', () => {
    for (const role of ['spinnaker', 'write', 'kube', 'agent']) {
      assert.throws(
        () => load({ roles: ['read', role] }),
        new RegExp(`the role ${role} reaches accounts: list the account name patterns`),
        role,
      );
    }
    assert.throws(() => load({ roles: ['write', 'spinnaker'] }), /the roles write, spinnaker reach accounts/);
  });

  test('accounts on a rule granting only roles that reach every account is refused', () => {
    assert.throws(() => load({ roles: ['read', 'admin'], accounts: ['prod-*'] }), /accounts has no effect on the roles read, admin/);
    assert.doesNotThrow(() => load({ roles: ['read', 'spinnaker'], accounts: ['prod-*'] }));
    assert.doesNotThrow(() => load({ roles: ['read'] }));
  });
});
