import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_DEFAULTS, AgentConfigError, loadAgentConfig, parseAgentConfig } from '../../src/agent/index.js';
import { metricsAddress } from '../../src/agent/metrics/metrics-server.js';

const dir = mkdtempSync(join(tmpdir(), 'outpost-agent-config-'));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function issuesOf(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AgentConfigError, `expected AgentConfigError, got ${String(err)}`);
    return err.issues;
  }
  assert.fail('expected the configuration to be rejected');
}

describe('agent configuration', () => {
  test('the shipped example loads, with every documented key', () => {
    const config = loadAgentConfig(new URL('../../config/agent.example.yaml', import.meta.url).pathname, {});
    assert.equal(config.clouddriver.grpc, 'localhost:9091');
    assert.equal(config.clouddriver.tls?.serverName, 'gateway.example.com');
    assert.equal(config.clouddriver.auth?.token, 'change-me');
    assert.equal(config.clouddriver.auth?.tokenCommandIntervalSeconds, 300);
    assert.equal(config.clouddriver.auth?.tokenCommandTimeoutSeconds, 30);
    assert.deepEqual(config.clouddriver.reconnect, { baseSeconds: 1, factor: 1.6, maxSeconds: 120, stableSeconds: 10 });
    assert.equal(config.kubernetes.accounts.length, 2);
    const [prod, local] = config.kubernetes.accounts;
    assert.deepEqual(prod!.namespaces, ['default', 'web']);
    assert.deepEqual(prod!.customResourceDefinitions, [{ kind: 'Widget.example.com', scope: 'Namespaced' }]);
    assert.deepEqual(prod!.properties, { team: 'platform' });
    assert.equal(local!.serviceAccount, true);
    assert.equal(config.server.port, 8082);
    assert.equal(config.server.host, '127.0.0.1');
    assert.deepEqual(config.prometheus, { enabled: true, port: 8008, host: '127.0.0.1' });
    assert.equal(config.agent.id, 'outpost-agent-0');
  });

  test('defaults come from AGENT_DEFAULTS and identity from POD_NAME / POD_NAMESPACE', () => {
    const config = parseAgentConfig({}, { POD_NAME: 'agent-7', POD_NAMESPACE: 'spinnaker' });
    assert.equal(config.clouddriver.grpc, AGENT_DEFAULTS.grpc);
    assert.equal(config.clouddriver.insecure, true);
    assert.equal(config.clouddriver.keepAliveHeartbeatSeconds, 20);
    assert.equal(config.server.port, AGENT_DEFAULTS.adminPort);
    assert.equal(config.agent.id, 'agent-7');
    assert.equal(config.agent.zone, 'spinnaker');
    assert.equal(parseAgentConfig({}, {}).agent.zone, 'default');
  });

  test('environment overrides top-level values, and bad overrides name the key', () => {
    const config = parseAgentConfig(
      { clouddriver: { grpc: 'a:1' } },
      { OUTPOST_AGENT_GRPC: 'gw.example.com:9443', OUTPOST_AGENT_TOKEN: 't0k', OUTPOST_AGENT_ADMIN_PORT: '0' },
    );
    assert.equal(config.clouddriver.grpc, 'gw.example.com:9443');
    assert.equal(config.clouddriver.auth?.token, 't0k');
    assert.equal(config.server.port, 0);
    const issues = issuesOf(() => parseAgentConfig({}, { OUTPOST_AGENT_GRPC: 'no-port' }));
    assert.deepEqual(
      issues.map((i) => i.path),
      ['clouddriver.grpc'],
    );
  });

  test('reference keys are accepted silently; unknown keys are rejected with their path', () => {
    const ok = parseAgentConfig(
      {
        metrics: { enabled: true },
        clouddriver: {
          keepAliveTimeOutSeconds: 30,
          noProxy: true,
          auth: { tokenCommand: { command: 'x' } },
          backoff: { baseDelay: 2e9, multiplier: 2, maxDelay: 6e10 },
        },
        kubernetes: { accounts: [{ name: 'a', serviceAccount: true, onlySpinnakerManaged: true, metrics: false, providerVersion: 'V2' }] },
      },
      {},
    );
    assert.deepEqual(ok.clouddriver.reconnect, { baseSeconds: 2, factor: 2, maxSeconds: 60, stableSeconds: 10 });
    const issues = issuesOf(() =>
      parseAgentConfig({ bogus: 1, kubernetes: { accounts: [{ name: 'a', serviceAccount: true, colour: 'red' }] } }, {}),
    );
    assert.deepEqual(issues.map((i) => `${i.path}: ${i.message}`).sort(), [
      ': unknown key "bogus"',
      'kubernetes.accounts[0]: unknown key "colour"',
    ]);
  });

  test('account rules: name format, uniqueness, one credential source, kind names', () => {
    const issues = issuesOf(() =>
      parseAgentConfig(
        {
          kubernetes: {
            accounts: [
              { name: 'Bad Name', serviceAccount: true },
              { name: 'dup', serviceAccount: true },
              { name: 'dup', serviceAccount: true },
              { name: 'nocreds' },
              { name: 'both', serviceAccount: true, kubeconfigFile: '/k' },
              { name: 'kinds', serviceAccount: true, kinds: ['Deployment.apps', 'not a kind'] },
            ],
          },
        },
        {},
      ),
    );
    const paths = issues.map((i) => i.path);
    assert.ok(paths.includes('kubernetes.accounts[0].name'));
    assert.ok(issues.some((i) => i.path === 'kubernetes.accounts[2].name' && i.message.includes('duplicate')));
    assert.ok(issues.some((i) => i.path === 'kubernetes.accounts[3].kubeconfigFile' && i.message.includes('serviceAccount')));
    assert.ok(paths.includes('kubernetes.accounts[4].serviceAccount'));
    assert.ok(paths.includes('kubernetes.accounts[5].kinds[1]'));
    assert.equal(paths.length, 5);
  });

  test('kubeProxy: a static identity needs a user; user and groups only with it; defaults impersonate the caller and deny Secrets', () => {
    const issues = issuesOf(() =>
      parseAgentConfig(
        {
          kubernetes: {
            accounts: [
              { name: 'a', serviceAccount: true, kubeProxy: { identity: 'static' } },
              { name: 'b', serviceAccount: true, kubeProxy: { user: 'ops' } },
              { name: 'c', serviceAccount: true, kubeProxy: { identity: 'nobody' } },
              { name: 'e', serviceAccount: true, kubeProxy: { secrets: 'read' } },
            ],
          },
        },
        {},
      ),
    );
    assert.ok(issues.some((i) => i.path === 'kubernetes.accounts[0].kubeProxy.user' && i.message.includes('identity static needs user')));
    assert.ok(issues.some((i) => i.path === 'kubernetes.accounts[1].kubeProxy.identity' && i.message.includes('identity static only')));
    assert.ok(issues.some((i) => i.path === 'kubernetes.accounts[2].kubeProxy.identity'));
    assert.ok(issues.some((i) => i.path === 'kubernetes.accounts[3].kubeProxy.secrets'));
    const ok = parseAgentConfig(
      {
        kubernetes: {
          accounts: [
            { name: 'd', serviceAccount: true },
            { name: 'f', serviceAccount: true, kubeProxy: { secrets: 'allow' } },
          ],
        },
      },
      {},
    );
    assert.deepEqual(ok.kubernetes.accounts[0]!.kubeProxy, { enabled: true, identity: 'caller', groups: [], secrets: 'deny' });
    assert.equal(ok.kubernetes.accounts[1]!.kubeProxy.secrets, 'allow');
  });

  test('error messages list every issue; files: missing, bad YAML, relative kubeconfig paths', () => {
    const err = (() => {
      try {
        parseAgentConfig({ server: { port: 70000 }, clouddriver: { grpc: 'x:0' } }, {});
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    assert.match(err!.message, /server\.port/);
    assert.match(err!.message, /clouddriver\.grpc: port must be between 1 and 65535/);
    assert.match(issuesOf(() => loadAgentConfig(join(dir, 'missing.yaml'), {}))[0]!.message, /cannot read file/);
    assert.match(issuesOf(() => loadAgentConfig(file('bad.yaml', 'kubernetes: [\n'), {}))[0]!.message, /YAML syntax/);
    assert.match(issuesOf(() => loadAgentConfig(file('list.yaml', '- a\n'), {}))[0]!.message, /mapping/);
    const config = loadAgentConfig(file('rel.yaml', 'kubernetes:\n  accounts:\n    - name: a\n      kubeconfigFile: kube/config\n'), {});
    assert.equal(config.kubernetes.accounts[0]!.kubeconfigFile, join(dir, 'kube/config'));
  });

  test('auth: one token source at a time; tokenCommand as a shell line or {command, args}; interval validated', () => {
    const line = parseAgentConfig({ clouddriver: { auth: { tokenCommand: 'vault read -field=token x' } } }, {});
    assert.deepEqual(line.clouddriver.auth?.tokenCommand, { command: 'vault read -field=token x' });
    assert.equal(line.clouddriver.auth?.tokenCommandIntervalSeconds, AGENT_DEFAULTS.tokenCommandIntervalSeconds);
    assert.equal(line.clouddriver.auth?.tokenCommandTimeoutSeconds, AGENT_DEFAULTS.tokenCommandTimeoutSeconds);
    const args = parseAgentConfig(
      { clouddriver: { auth: { tokenCommand: { command: '/bin/echo', args: ['t'] }, tokenCommandIntervalSeconds: 60 } } },
      {},
    );
    assert.deepEqual(args.clouddriver.auth?.tokenCommand, { command: '/bin/echo', args: ['t'] });
    assert.equal(args.clouddriver.auth?.tokenCommandIntervalSeconds, 60);
    const both = issuesOf(() => parseAgentConfig({ clouddriver: { auth: { token: 'a', tokenCommand: 'echo b' } } }, {}));
    assert.deepEqual(
      both.map((i) => i.path),
      ['clouddriver.auth.tokenCommand'],
    );
    assert.match(both[0]!.message, /token and tokenCommand are mutually exclusive/);
    // The environment token counts as a source too.
    assert.match(
      issuesOf(() => parseAgentConfig({ clouddriver: { auth: { tokenFile: '/t' } } }, { OUTPOST_AGENT_TOKEN: 'x' }))[0]!.message,
      /mutually exclusive/,
    );
    assert.deepEqual(
      issuesOf(() => parseAgentConfig({ clouddriver: { auth: { tokenCommand: 'x', tokenCommandIntervalSeconds: 0 } } }, {})).map(
        (i) => i.path,
      ),
      ['clouddriver.auth.tokenCommandIntervalSeconds'],
    );
    assert.deepEqual(
      issuesOf(() => parseAgentConfig({ clouddriver: { auth: { tokenCommand: '  ' } } }, {})).map((i) => i.path),
      ['clouddriver.auth.tokenCommand'],
    );
    assert.equal(parseAgentConfig({}, { OUTPOST_AGENT_TOKEN_FILE: '/run/token' }).clouddriver.auth?.tokenFile, '/run/token');
    const rel = loadAgentConfig(file('token.yaml', 'clouddriver:\n  auth:\n    tokenFile: secrets/token\n'), {});
    assert.equal(rel.clouddriver.auth?.tokenFile, join(dir, 'secrets/token'));
  });

  test('admin and metrics addresses: local by default, prometheus a strict section, metrics port follows an ephemeral admin port', () => {
    const defaults = parseAgentConfig({}, {});
    assert.equal(defaults.server.host, AGENT_DEFAULTS.adminHost);
    assert.deepEqual(metricsAddress(defaults), { port: AGENT_DEFAULTS.metricsPort, host: '127.0.0.1' });
    // Several agents on one host (tests) use server.port 0: their metrics must not all claim 8008.
    assert.deepEqual(metricsAddress(parseAgentConfig({ server: { port: 0 } }, {})), { port: 0, host: '127.0.0.1' });
    assert.deepEqual(metricsAddress(parseAgentConfig({ server: { port: 0, host: '0.0.0.0' }, prometheus: { port: 9100 } }, {})), {
      port: 9100,
      host: '0.0.0.0',
    });
    assert.deepEqual(metricsAddress(parseAgentConfig({ server: { host: '[::1]' }, prometheus: { host: '127.0.0.1' } }, {})), {
      port: 8008,
      host: '127.0.0.1',
    });
    assert.equal(parseAgentConfig({ server: { host: '[::1]' } }, {}).server.host, '::1');
    assert.equal(metricsAddress(parseAgentConfig({ prometheus: { enabled: false } }, {})), undefined);
    assert.equal(parseAgentConfig({}, { OUTPOST_AGENT_METRICS_PORT: '9999' }).prometheus.port, 9999);
    const issues = issuesOf(() =>
      parseAgentConfig({ prometheus: { port: 70000, colour: 'red', enabled: 'yes' }, server: { host: 'not a host' } }, {}),
    );
    assert.deepEqual(issues.map((i) => i.path).sort(), ['prometheus', 'prometheus.enabled', 'prometheus.port', 'server.host']);
  });

  test("relative paths — TLS files, token file, kubeconfigs, from the file or the environment — resolve against the file's directory", () => {
    const text = [
      'clouddriver:',
      '  grpc: gateway:9091',
      '  tls: { cacertFile: tls/ca.pem, clientCertFile: tls/agent.pem, clientKeyFile: /abs/agent-key.pem }',
      'kubernetes:',
      '  accounts:',
      '    - { name: a, kubeconfigFile: kube/a }',
      '    - { name: b, kubeconfigFile: /abs/b }',
      '',
    ].join('\n');
    const config = loadAgentConfig(file('paths.yaml', text), { OUTPOST_AGENT_TOKEN_FILE: 'tokens/agent' });
    const tls = config.clouddriver.tls!;
    assert.deepEqual(
      [tls.cacertFile, tls.clientCertFile, tls.clientKeyFile],
      [join(dir, 'tls/ca.pem'), join(dir, 'tls/agent.pem'), '/abs/agent-key.pem'],
    );
    assert.equal(config.clouddriver.auth?.tokenFile, join(dir, 'tokens/agent'), 'OUTPOST_AGENT_TOKEN_FILE too');
    assert.deepEqual(
      config.kubernetes.accounts.map((a) => a.kubeconfigFile),
      [join(dir, 'kube/a'), '/abs/b'],
    );
    // Without a file (a configuration built in code), paths stay as given.
    assert.equal(parseAgentConfig({ clouddriver: { tls: { cacertFile: 'tls/ca.pem' } } }, {}).clouddriver.tls?.cacertFile, 'tls/ca.pem');
  });

  test('TLS: a client key needs a certificate', () => {
    const issues = issuesOf(() => parseAgentConfig({ clouddriver: { insecure: false, tls: { clientKeyFile: '/k.pem' } } }, {}));
    assert.deepEqual(
      issues.map((i) => i.path),
      ['clouddriver.tls.clientKeyFile'],
    );
  });
  // hostile-input regression: the yaml library's alias-bomb guard threw a ReferenceError out of loadAgentConfig
  test('a YAML alias bomb or an undefined alias is an AgentConfigError, not a ReferenceError', () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-config-'));
    const bomb =
      'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n';
    const file = join(dir, 'bomb.yaml');
    writeFileSync(file, bomb);
    const issues = issuesOf(() => loadAgentConfig(file, {}));
    assert.match(issues[0]!.message, /^YAML syntax: /);
  });
});
