/**
 * The read commands on the real stack (CLI in process → gateway → agent → sandbox): `get --cached` reads the cache
 * without submitting any operation, `accounts` and `operations` print kubectl-like tables, details and -o forms, and
 * `operations ID --watch` exits by the operation's outcome. Every error path with its exit code: 1 not found / failed,
 * 2 usage.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOperationClient } from '../../src/client/operation-client.js';
import { waitForCacheToMatch } from '../../testkit/cache-compare.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { runCli } from './operations-helpers.js';

describe('get --cached, accounts and operations on the real stack', () => {
  let stack: Stack;
  const cli = (...args: string[]) => runCli([...args, '--gateway', stack.gateway.httpUrl]);
  const operationCount = async () => {
    const page = await createOperationClient({ gatewayUrl: stack.gateway.httpUrl }).raw.listOperations({ pageSize: 1000 });
    return page.operations.length;
  };

  before(async () => {
    stack = await startStack({ agents: [{}] });
    await waitForCacheToMatch(stack.gateway.database, stack.sandbox, 'sandbox', { timeoutMs: 25_000 });
  });
  after(async () => {
    await stack?.close();
  });

  test('get --cached prints tables, -o name|json|yaml, honours -l and -A, and submits no operation', async () => {
    const before = await operationCount();
    const table = await cli('get', 'deploy', '--cached', '--account', 'sandbox', '-n', 'demo');
    assert.equal(table.code, 0, table.err);
    const [header, ...rows] = table.out.trim().split('\n');
    assert.match(header!, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/);
    assert.ok(
      rows.some((r) => /^web\s+\d\/3\s+\d\s+\d\s+\S+$/.test(r)),
      table.out,
    );

    const byLabel = await cli('get', 'cm', '-l', 'app=web', '--cached', '--account', 'sandbox', '-n', 'demo', '-o', 'name');
    assert.equal(byLabel.out, 'configmap/web-config\n');

    const yaml = await cli('get', 'deployment/web', '--cached', '--account', 'sandbox', '-n', 'demo', '-o', 'yaml');
    assert.equal(yaml.code, 0, yaml.err);
    assert.match(yaml.out, /^apiVersion: apps\/v1\nkind: Deployment\nmetadata:\n/);
    assert.match(yaml.out, /\nspec:\n[\s\S]*\nstatus:\n/);

    const json = await cli('get', 'cm', '--cached', '--account', 'sandbox', '-A', '-o', 'json');
    const list = JSON.parse(json.out);
    assert.equal(list.kind, 'List');
    const namespaces = new Set(list.items.map((o: { metadata: { namespace: string } }) => o.metadata.namespace));
    assert.ok(namespaces.has('demo') && namespaces.has('demo-backend'), [...namespaces].join());

    const all = await cli('get', 'cm', '--cached', '--account', 'sandbox', '-A');
    assert.match(all.out, /^NAMESPACE\s+NAME\s+DATA\s+AGE\n/);

    const none = await cli('get', 'cm', '--cached', '--account', 'sandbox', '-n', 'nothing-here');
    assert.equal(none.code, 0);
    assert.equal(none.err, 'No resources found in nothing-here namespace.\n');
    assert.equal(await operationCount(), before, '--cached never submits an operation');
  });

  test('get --cached errors: unknown account or kind and a name not cached exit 1; live-only flags exit 2', async () => {
    const unknownAccount = await cli('get', 'cm', '--cached', '--account', 'nope');
    assert.equal(unknownAccount.code, 1);
    assert.equal(unknownAccount.err, 'error: NotFound: account "nope" not found (HTTP 404)\n');

    const unknownKind = await cli('get', 'Widget', '--cached', '--account', 'sandbox');
    assert.equal(unknownKind.code, 1);
    assert.match(
      unknownKind.err,
      /^error: NotFound: kind "Widget" not found in account "sandbox"; its kinds: .*\bConfigMap\b.*\bDeployment\b/,
    );

    const missing = await cli('get', 'cm', 'nope', '--cached', '--account', 'sandbox', '-n', 'demo');
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^error: NotFound: ConfigMap demo\/nope in account sandbox is not in the cache \(HTTP 404\)\n$/);

    for (const args of [
      ['get', 'pods', '--cached', '--field-selector', 'status.phase=Running', '--account', 'sandbox'],
      ['get', 'pods', '--cached', '--no-wait', '--account', 'sandbox'],
      ['get', 'pods', '--cached', '-o', 'xml', '--account', 'sandbox'],
    ]) {
      const r = await cli(...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    }
    // Without --account: the gateway's only account.
    const only = await cli('get', 'deploy', '--cached', '-n', 'demo');
    assert.equal(only.code, 0, only.err);
    assert.match(only.out, /^web\s/m);
  });

  test('accounts: a table, -o name|json|wide, one account with its kinds; unknown account 1, bad flags 2', async () => {
    const table = await cli('accounts');
    assert.equal(table.code, 0, table.err);
    const [header, row] = table.out.trim().split('\n');
    assert.match(header!, /^NAME\s+STATE\s+AGENT\s+GATEWAY\s+KINDS SYNCED\s+OBJECTS\s+LAST EVENT$/);
    assert.match(row!, /^sandbox\s+ACTIVE\s+agent-1\s+gw-1\s+\d+\/\d+\s+\d+\s+(\S+ ago|<none>)$/);

    assert.equal((await cli('accounts', '-o', 'name')).out, 'account/sandbox\n');
    const json = JSON.parse((await cli('accounts', '-o', 'json')).out);
    assert.deepEqual(
      json.accounts.map((a: { name: string }) => a.name),
      ['sandbox'],
    );
    assert.match(
      (await cli('accounts', '-o', 'wide')).out,
      /^NAME\s+STATE\s+AGENT\s+GATEWAY\s+KINDS SYNCED\s+OBJECTS\s+LAST EVENT\s+ZONE\s+SOURCE\s+KUBERNETES\s+API HOST\n/,
    );

    const one = await cli('accounts', 'sandbox');
    assert.equal(one.code, 0, one.err);
    assert.match(one.out, /^Name:\s+sandbox\nState:\s+ACTIVE\n/);
    assert.match(one.out, /\nKinds:\n\s+KIND\s+API VERSION\s+OBJECTS\s+SYNCED\n/);
    assert.match(one.out, /\n\s+Deployment\s+apps\/v1\s+\d+\s+(yes|no)\n/);
    assert.match(one.out, /\nSkipped kinds:\n/);
    const oneYaml = await cli('accounts', 'sandbox', '-o', 'yaml');
    assert.match(oneYaml.out, /^name: sandbox\n/m);

    const unknown = await cli('accounts', 'nope');
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /^error: NotFound: .*nope/);
    for (const args of [
      ['accounts', '-o', 'xml'],
      ['accounts', 'a', 'b'],
      ['accounts', '--gateway', 'ftp://x'],
    ]) {
      const r = await runCli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    }
  });

  test('operations: the list and one operation in detail and as JSON; filters; errors exit 1 or 2', async () => {
    const patched = await cli(
      'patch',
      'cm/web-config',
      '-n',
      'demo',
      '-p',
      '{"data":{"read":"yes"}}',
      '--account',
      'sandbox',
      '--id',
      'read-op-1',
    );
    assert.equal(patched.code, 0, patched.err);
    const list = await cli('operations');
    assert.equal(list.code, 0, list.err);
    const lines = list.out.trim().split('\n');
    assert.match(lines[0]!, /^ID\s+KIND\s+TARGET\s+STATE\s+SUBMITTER\s+AGE\s+RESULT$/);
    assert.ok(
      lines.some((l) => /^read-op-1\s+patch\s+configmap\/web-config -n demo\s+SUCCEEDED\s+\S+\s+\S+\s+OK \(HTTP 200\)$/.test(l)),
      list.out,
    );
    assert.match((await cli('operations', '-o', 'wide')).out, /\bACCOUNT\s+GATEWAY\s+AGENT\s+DURATION\n/);
    assert.match((await cli('operations', '-o', 'name', '--account', 'sandbox')).out, /^operation\/read-op-1$/m);
    const failedOnly = await cli('operations', '--state', 'failed', '-o', 'name');
    assert.doesNotMatch(failedOnly.out, /read-op-1/);
    const otherAccount = await cli('operations', '--account', 'elsewhere');
    assert.equal(otherAccount.code, 0);
    assert.equal(otherAccount.err, 'No operations found.\n');

    const detail = await cli('operations', 'read-op-1');
    assert.equal(detail.code, 0, detail.err);
    assert.match(
      detail.out,
      /^ID:\s+read-op-1\nAccount:\s+sandbox\nKind:\s+patch\nTarget:\s+configmap\/web-config -n demo\nState:\s+SUCCEEDED\n/,
    );
    assert.match(detail.out, /\nResult:\s+OK \(HTTP 200\)\nObjects:\s+configmap\/web-config\n/);
    const asJson = JSON.parse((await cli('operations', 'read-op-1', '-o', 'json')).out);
    assert.equal(asJson.id, 'read-op-1');
    assert.equal(asJson.state, 'OPERATION_STATE_SUCCEEDED');

    const unknown = await cli('operations', 'no-such-op');
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /^error: NotFound: /);
    for (const args of [
      ['operations', '--watch'],
      ['operations', '--limit', '0'],
      ['operations', '--state', 'done'],
      ['operations', 'read-op-1', '--account', 'sandbox'],
    ]) {
      const r = await cli(...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    }
  });

  test('operations ID --watch follows an operation to its end: exit 0 when it succeeded, 1 when it failed', async () => {
    const submitted = await cli(
      'scale',
      'deploy/web',
      '-n',
      'demo',
      '--replicas',
      '2',
      '--account',
      'sandbox',
      '--no-wait',
      '--id',
      'watch-ok',
    );
    assert.equal(submitted.code, 0, submitted.err);
    const ok = await cli('operations', 'watch-ok', '--watch');
    assert.equal(ok.code, 0, ok.err);
    const rows = ok.out.trim().split('\n');
    assert.match(rows[0]!, /^ID\s+KIND\s+TARGET\s+STATE/);
    assert.match(rows.at(-1)!, /^watch-ok\s+scale\s+deployment\.apps\/web -n demo\s+SUCCEEDED\s/);

    await cli('scale', 'deploy/nope', '-n', 'demo', '--replicas', '1', '--account', 'sandbox', '--no-wait', '--id', 'watch-fail');
    const failed = await cli('operations', 'watch-fail', '--watch', '-o', 'name');
    assert.equal(failed.code, 1);
    assert.equal(failed.out, 'operation/watch-fail\n');
    assert.match(failed.err, /^error: NotFound: .*nope.*\(HTTP 404\)\n$/);

    const unknown = await cli('operations', 'no-such-op', '--watch');
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /^error: NotFound: /);
  });
});
