/**
 * Every client command against a gateway that wants credentials (auth.tokens, then also TLS), in process against the
 * real stack: with a token that may write, each command succeeds through --token-file, OUTPOST_TOKEN and an exec
 * credential plugin (`outpost credential` itself among them); a read-only token is refused for every write with the
 * gateway's PermissionDenied (exit 1); without a token every command gets Unauthenticated (HTTP 401), exit 1, every
 * time; over https --ca-file and --insecure-skip-tls-verify work, and no CA or a wrong one is a clear certificate
 * error (exit 3).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { GatewayConfigInput } from '../../src/gateway/index.js';
import { createCertificateAuthority } from '../../src/sandbox/certs.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { createTestPki, type TestPki } from '../../testkit/auth-helpers.js';
import { runCli, type CliRun } from './operations-helpers.js';

const BIN = fileURLToPath(new URL('../../bin/outpost.js', import.meta.url));
const TOKENS = { agent: 'agent-token-0123456789abcdef', admin: 'admin-token-0123456789abcdef', reader: 'reader-token-0123456789abcd' };

/** auth.tokens with an agent, an admin (read, write, admin) and a reader (read only); `extra` over it (tls…). */
function securedGateway(dir: string, extra: GatewayConfigInput = {}): GatewayConfigInput {
  const replicaSecretFile = join(dir, 'replica-secret');
  writeFileSync(replicaSecretFile, 'replica-secret-0123456789-0123456789-abcdef');
  return {
    insecure: false,
    auth: {
      replicaSecretFile,
      tokens: [
        { subject: 'agent', token: TOKENS.agent },
        { subject: 'admin', token: TOKENS.admin },
        { subject: 'reader', token: TOKENS.reader },
      ],
    },
    authorization: {
      rules: [
        { kind: 'token', subject: '^agent$', roles: ['agent'], accounts: ['*'] },
        { kind: 'token', subject: '^admin$', roles: ['read', 'write', 'admin'], accounts: ['*'] },
        { kind: 'token', subject: '^reader$', roles: ['read'] },
      ],
    },
    ...extra,
  };
}

/** A plugin that prints an ExecCredential with the token of `file` (node itself: fast, no shell). */
function filePlugin(file: string): string {
  const script = `const t = require('node:fs').readFileSync(${JSON.stringify(file)}, 'utf8').trim();
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: t } }));`;
  return JSON.stringify([process.execPath, '-e', script]);
}

const configMap = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: demo}\ndata: {k: v}\n`;

describe('client commands against a gateway with auth.tokens', () => {
  let stack: Stack;
  let adminFile: string;
  let readerFile: string;
  let pod: string;
  const env = (extra: NodeJS.ProcessEnv = {}) => ({ PATH: process.env.PATH, HOME: process.env.HOME, ...extra });
  const cli = (args: string[], extraEnv: NodeJS.ProcessEnv = {}, stdin = '') =>
    runCli([...args, '--gateway', stack.gateway.httpUrl], { env: env(extraEnv), stdin });

  /** Every client command, each writing objects named after `tag`; `[args, stdin, what stdout must show]`. */
  const everyCommand = (tag: string): [string[], string, RegExp][] => [
    [['apply', '-f', '-', '--account', 'sandbox'], configMap(`cm-${tag}`), new RegExp(`^configmap/cm-${tag} created$`, 'm')],
    [['get', 'cm', `cm-${tag}`, '-n', 'demo', '--account', 'sandbox'], '', new RegExp(`^cm-${tag}\\s`, 'm')],
    [['get', 'deploy', '-n', 'demo', '--cached'], '', /^web\s/m],
    [['patch', `cm/cm-${tag}`, '-n', 'demo', '--type', 'merge', '-p', '{"data":{"k":"w"}}'], '', /^configmap\/cm-\w+ patched$/m],
    [['scale', 'deploy/web', '--replicas', '2', '-n', 'demo'], '', /^deployment\.apps\/web scaled$/m],
    [['rollout', 'history', 'deploy/web', '-n', 'demo'], '', /^REVISION\s+CHANGE-CAUSE$/m],
    [['rollout', 'status', 'deploy/web', '-n', 'demo', '--watch=false'], '', /deployment "web"/],
    // A pod of another Deployment than the one scaled above: it stays.
    [['logs', () => pod, '-n', 'demo-backend', '--tail', '1'] as never, '', /./],
    [['delete', `cm/cm-${tag}`, '-n', 'demo'], '', new RegExp(`^configmap "cm-${tag}" deleted`, 'm')],
    [['accounts'], '', /^sandbox\s+ACTIVE/m],
    [['operations', '--limit', '3'], '', /^ID\s+KIND/m],
  ];
  const argsOf = (args: (string | (() => string))[]) => args.map((a) => (typeof a === 'function' ? a() : a));

  before(async () => {
    stack = await startStack({ gateway: (dir) => securedGateway(dir) });
    await stack.startAgent({ config: { clouddriver: { auth: { token: TOKENS.agent } } } });
    adminFile = join(stack.dir, 'admin-token');
    writeFileSync(adminFile, `${TOKENS.admin}\n`);
    readerFile = join(stack.dir, 'reader-token');
    writeFileSync(readerFile, `${TOKENS.reader}\n`);
    // Wait until the agent's account is there and its demo Deployment cached (the admin token reads them).
    const deadline = Date.now() + 60_000;
    let r: CliRun | undefined;
    while (!/^web\s/m.test(r?.out ?? '')) {
      assert.ok(Date.now() < deadline, `the demo Deployment never reached the cache: ${r?.err}`);
      r = await cli(['get', 'deploy', '-n', 'demo', '--cached', '--account', 'sandbox', '--token-file', adminFile]);
      if (r.code !== 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const pods = await cli(['get', 'pods', '-n', 'demo-backend', '-l', 'app=api', '-o', 'name', '--token-file', adminFile]);
    assert.equal(pods.code, 0, pods.err);
    pod = pods.out.split('\n')[0]!.replace('pod/', '');
    assert.ok(pod, pods.out);
  });
  after(async () => {
    await stack?.close();
  });

  const paths: [string, (file: string) => [string[], NodeJS.ProcessEnv]][] = [
    ['--token-file', (file) => [['--token-file', file], {}]],
    ['OUTPOST_TOKEN', () => [[], { OUTPOST_TOKEN: TOKENS.admin }]],
    ['--credential-exec', (file) => [['--credential-exec', filePlugin(file)], {}]],
    ['OUTPOST_TOKEN_FILE', (file) => [[], { OUTPOST_TOKEN_FILE: file }]],
  ];
  for (const [path, credentials] of paths) {
    test(`every command succeeds with a write token through ${path}`, async () => {
      const [flags, extraEnv] = credentials(adminFile);
      for (const [args, stdin, shows] of everyCommand(path.toLowerCase().replace(/[^a-z0-9]/g, ''))) {
        const r = await cli([...argsOf(args), ...flags], extraEnv, stdin);
        assert.equal(r.code, 0, `${args[0]} through ${path}: ${r.err}`);
        assert.match(r.out, shows, `${args[0]} through ${path}`);
      }
    });
  }

  test('the exec path with `outpost credential` itself, as a kubeconfig exec entry runs it', async () => {
    const r = await cli(['accounts', '--credential-exec', `${process.execPath} ${BIN} credential --token-file ${adminFile}`]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^sandbox\s+ACTIVE/m);
    const broken = await cli(['accounts', '--credential-exec', `${process.execPath} ${BIN} credential --token-file /nonexistent`]);
    assert.equal(broken.code, 2);
    assert.match(
      broken.err,
      /^error: the credential command ".* credential --token-file \/nonexistent" exited 2: error: cannot read the token/,
    );
  });

  test('a read-only token reads, and is refused every write with PermissionDenied, exit 1', async () => {
    for (const [args, stdin] of everyCommand('reader')) {
      const r = await cli([...argsOf(args), '--token-file', readerFile], {}, stdin);
      const writes = !['accounts', 'operations'].includes(args[0] as string) && !(args as string[]).includes('--cached');
      if (!writes) {
        assert.equal(r.code, 0, `${args[0]}: ${r.err}`);
        continue;
      }
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.err}`);
      assert.equal(
        r.err,
        'error: PermissionDenied: reader lacks the role "write" required for outpost.api.v1.OperationService/SubmitOperation (HTTP 403)\n',
        String(args[0]),
      );
    }
  });

  test('no token: Unauthenticated (HTTP 401), exit 1, for every command, every time (a large apply too)', async () => {
    const big = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: demo}\ndata: {k: "${'x'.repeat(900_000)}"}\n`;
    for (let round = 0; round < 3; round++) {
      for (const [args, stdin] of [...everyCommand('anonymous'), [['apply', '-f', '-', '--account', 'sandbox'], big] as const]) {
        const r = await cli(argsOf(args as string[]), {}, stdin);
        assert.deepEqual(
          [r.code, r.err.replace(/\(Authorization: Bearer <token>\) /, '')],
          [
            1,
            'error: Unauthenticated: authentication required: present a bearer token (HTTP 401); no credentials were sent: run ' +
              `outpost login --gateway ${stack.gateway.httpUrl} to sign in, or give a token (--help lists the ways)\n`,
          ],
          `${args[0]}, round ${round}`,
        );
        assert.doesNotMatch(r.err, /EPIPE|HTTP 500/);
      }
    }
  });
});

describe('client commands against a TLS gateway', () => {
  let stack: Stack;
  let pki: TestPki;
  let tokenFile: string;
  let otherCa: string;
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runCli([...args, '--gateway', stack.gateway.httpUrl, '--token-file', tokenFile], { env });

  before(async () => {
    pki = await createTestPki();
    stack = await startStack({
      gateway: (dir) => securedGateway(dir, { tls: { certFile: pki.certFile, keyFile: pki.keyFile, caFile: pki.caFile } }),
    });
    await stack.startAgent({
      config: { clouddriver: { insecure: false, tls: { cacertFile: pki.caFile }, auth: { token: TOKENS.agent } } },
    });
    tokenFile = join(stack.dir, 'token');
    writeFileSync(tokenFile, TOKENS.admin);
    otherCa = pki.write('other-ca.pem', (await createCertificateAuthority()).caPem);
    const deadline = Date.now() + 60_000;
    let r: CliRun | undefined;
    while (!/^sandbox\s+ACTIVE/m.test(r?.out ?? '')) {
      assert.ok(Date.now() < deadline, `the account never became ACTIVE: ${r?.out}${r?.err}`);
      if (r) await new Promise((resolve) => setTimeout(resolve, 200));
      r = await cli(['accounts', '--ca-file', pki.caFile]);
    }
  });
  after(async () => {
    await stack?.close();
    pki?.remove();
  });

  test('an https gateway: --ca-file, OUTPOST_CA_FILE and --insecure-skip-tls-verify work', async () => {
    assert.ok(stack.gateway.httpUrl.startsWith('https://'), stack.gateway.httpUrl);
    for (const [flags, env] of [
      [['--ca-file', pki.caFile], {}],
      [[], { OUTPOST_CA_FILE: pki.caFile }],
      [['--insecure-skip-tls-verify'], {}],
    ] as const) {
      const accounts = await cli(['accounts', ...flags], env);
      assert.equal(accounts.code, 0, accounts.err);
      assert.match(accounts.out, /^sandbox\s/m);
      const scaled = await cli(['scale', 'deploy/web', '--replicas', '1', '-n', 'demo', ...flags], env);
      assert.equal(scaled.code, 0, scaled.err);
    }
  });

  test('no CA or a wrong one: a clear certificate error, exit 3; an unreadable CA file: exit 2', async () => {
    for (const flags of [[], ['--ca-file', otherCa]]) {
      const r = await cli(['accounts', ...flags]);
      assert.equal(r.code, 3, r.err);
      assert.match(
        r.err,
        /^error: the certificate of the gateway at https:\/\/\S+ does not verify \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY): .*\); pass --ca-file FILE \(or OUTPOST_CA_FILE\) with the CA that signed it\n$/,
      );
    }
    const unreadable = await cli(['get', 'pods', '--ca-file', join(pki.dir, 'missing.pem')]);
    assert.equal(unreadable.code, 2);
    assert.match(unreadable.err, /^error: cannot read the --ca-file .*missing\.pem \(ENOENT\)\n$/);
  });
});
