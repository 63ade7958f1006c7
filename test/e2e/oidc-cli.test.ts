/**
 * The CLI and kubectl as a person signed in with the company's provider, end to end: the test OpenID provider, a
 * TLS gateway with rules by group (platform admins read, write and use kubectl; developers read), the sandbox and an
 * agent. Alice signs in with `outpost login --flow device` (a child process; the code entered in Chromium); then
 * `outpost get` and `outpost apply` act as her, and kubectl through `/k8s` with a kubeconfig of `outpost kubeconfig
 * --exec --oidc` does too — the cluster sees `outpost:corp:alice` (kube.userPrefix + the principal's subject
 * `corp:alice`, as a token's `alice` becomes `outpost:alice`) in `outpost:corp:platform-admins`, the audit log
 * `oidc:corp:alice`. Bob (a developer) signs in too and is refused `apply`. After `outpost logout` the commands and
 * kubectl say to run outpost login.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { eventually } from '../../testkit/eventually.js';
import { createKubectlWith, type Kubectl } from '../../testkit/kubectl-runner.js';
import { startTestOidcProvider, type TestOidcProvider } from '../../testkit/oidc-test-provider.js';
import { runSignInCli } from '../cli/login-helpers.js';
import { runCli } from '../cli/operations-helpers.js';
import { launchChromium } from './browser.js';
import { type AuditEventJson, auditEvents, KUBECTLS, type KubeStack, startKubeStack } from './kubectl-helpers.js';
import { deviceSignIn, PLATFORM_ADMINS_RBAC, signInGateway } from './oidc-cli-helpers.js';

describe('outpost login, then the CLI and kubectl as that person', { concurrency: false }, () => {
  let provider: TestOidcProvider;
  let k: KubeStack;
  let browser: Browser;
  let kubectl: Kubectl;
  const dir = mkdtempSync(join(tmpdir(), 'outpost-oidc-cli-'));
  const aliceDir = join(dir, 'alice');
  const bobDir = join(dir, 'bob');
  let url: string;
  const cli = (configDir: string, args: string[], stdin = '') =>
    runCli([...args, '--gateway', url, '--ca-file', k.pki.caFile], { env: { OUTPOST_CONFIG_DIR: configDir }, stdin });

  before(async () => {
    provider = await startTestOidcProvider();
    provider.configure({ dashboardRedirectUris: ['http://127.0.0.1/unused'] });
    k = await startKubeStack({ gateway: signInGateway(dir, provider.issuer) });
    url = k.stack.gateway.httpUrl;
    await k.admin.ok(['apply', '-f', '-'], { input: PLATFORM_ADMINS_RBAC });
    browser = await launchChromium();
  });
  after(async () => {
    kubectl?.cleanup();
    await browser?.close();
    await k?.close();
    await provider?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('alice signs in with the device flow, her code entered in a browser', async () => {
    const result = await deviceSignIn(browser, { gatewayUrl: url, caFile: k.pki.caFile, configDir: aliceDir, login: 'alice' });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /Waiting for the sign-in to complete/);
    assert.match(
      result.stderr,
      /^Signed in to https:\/\/127\.0\.0\.1:\d+ with Corp SSO as alice@example\.com \(sub alice\); groups: platform-admins, everyone$/m,
    );
    assert.match(
      result.stderr,
      /^The gateway knows you as oidc:corp:alice with the roles kube, read, write, groups corp:platform-admins, corp:everyone$/m,
    );
  });

  test('outpost get and outpost apply act as alice', async () => {
    const pods = await cli(aliceDir, ['get', 'pods', '-n', 'demo', '--account', 'sandbox']);
    assert.equal(pods.code, 0, pods.err);
    assert.match(pods.out, /^web-/m);
    const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: by-alice, namespace: demo}\ndata: {who: alice}\n';
    const applied = await cli(aliceDir, ['apply', '-f', '-', '--account', 'sandbox'], manifest);
    assert.deepEqual([applied.code, applied.out], [0, 'configmap/by-alice created\n'], applied.err);
    assert.equal(await k.admin.ok(['get', 'configmap', '-n', 'demo', 'by-alice', '-o', 'jsonpath={.data.who}']), 'alice');
  });

  test('kubectl with a kubeconfig of "outpost kubeconfig --exec --oidc" acts as alice and her groups', async () => {
    kubectl = await createKubectlWith(
      KUBECTLS.at(-1)?.bin ?? '/usr/bin/kubectl',
      async (path) => {
        const args = [
          'kubeconfig',
          '--account',
          'sandbox',
          '--gateway',
          url,
          '--ca-file',
          k.pki.caFile,
          '--kubeconfig',
          path,
          '--set-current',
          '--exec',
          '--oidc',
        ];
        const written = await runSignInCli(args, { OUTPOST_CONFIG_DIR: aliceDir });
        assert.equal(written.code, 0, written.err);
      },
      { OUTPOST_CONFIG_DIR: aliceDir },
    );
    assert.match(await kubectl.ok(['get', 'pods', '-n', 'demo']), /^web-/m);
    const denied = await kubectl.run(['get', 'secrets', '-n', 'demo']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /User "outpost:corp:alice" cannot list resource "secrets"/);

    const events = await eventually('the audit log has alice’s kubectl requests', async () => {
      const all = await auditEvents(url, k.pki.caPem, 'oidc:corp:alice');
      return all.some((e) => e.resource === 'secrets' && e.stage === 'completed') ? all : undefined;
    });
    const listed = events.find((e) => e.verb === 'list' && e.resource === 'pods' && e.status === 200);
    assert.ok(listed, JSON.stringify(events));
    assert.equal(listed.impersonatedUser, 'outpost:corp:alice');
    assert.deepEqual(listed.impersonatedGroups, ['outpost:corp:platform-admins', 'outpost:corp:everyone']);
    const ofApply = events.find((e) => (e as AuditEventJson & { kind?: string }).kind === 'operation' && e.verb === 'apply');
    assert.ok(ofApply, 'the apply operation is audited as alice');
  });

  test('bob, a developer, signs in and is refused apply', async () => {
    const result = await deviceSignIn(browser, { gatewayUrl: url, caFile: k.pki.caFile, configDir: bobDir, login: 'bob' });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /as bob@example\.com \(sub bob\); groups: developers, everyone/);
    assert.match(result.stderr, /^The gateway knows you as oidc:corp:bob with the roles read, groups corp:developers, corp:everyone$/m);
    assert.equal((await cli(bobDir, ['get', 'deploy', '-n', 'demo', '--cached', '--account', 'sandbox'])).code, 0);
    const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: by-bob, namespace: demo}\ndata: {who: bob}\n';
    const refused = await cli(bobDir, ['apply', '-f', '-', '--account', 'sandbox'], manifest);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /^error: PermissionDenied: .*corp:bob lacks the role "write".* \(HTTP 403\)\n$/);
  });

  test('after outpost logout, commands and kubectl say to run outpost login', async () => {
    const out = await runSignInCli(['logout', '--gateway', url], { OUTPOST_CONFIG_DIR: aliceDir });
    assert.equal(out.code, 0, out.err);
    assert.match(out.err, /^Signed out of https:\/\/127\.0\.0\.1:\d+ \(provider corp\)/m);
    const get = await cli(aliceDir, ['get', 'pods', '-n', 'demo', '--account', 'sandbox']);
    assert.equal(get.code, 1);
    assert.match(
      get.err,
      /Unauthenticated: authentication required.*no credentials were sent: run outpost login --gateway https:\/\/127\.0\.0\.1:\d+ to sign in/,
    );
    const apply = await cli(
      aliceDir,
      ['apply', '-f', '-', '--account', 'sandbox'],
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: demo}\n',
    );
    assert.equal(apply.code, 1);
    assert.match(apply.err, /run outpost login --gateway/);
    const kube = await kubectl.run(['get', 'pods', '-n', 'demo']);
    assert.notEqual(kube.code, 0);
    assert.match(kube.stderr, /not signed in to https:\/\/127\.0\.0\.1:\d+: run outpost login --gateway https:\/\/127\.0\.0\.1:\d+/);
  });
});
