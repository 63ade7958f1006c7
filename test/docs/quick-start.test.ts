/**
 * Runs docs/quick-start.md. Part 1: the demo the page starts with `npm run demo` (started here in-process on free
 * ports, as `outpost demo` does), then every command of the `<!-- run: demo -->` block with bash — real curl and the
 * real kubectl — with only the demo's default address and kubeconfig path replaced by this run's, checking each
 * answer. Part 2: the `<!-- run: cluster -->` blocks against the demo's sandbox API server with the real kubectl
 * (`kubectl apply -k` renders the overlays the page names), then every Secret the applied Deployments mount or read
 * must exist with the keys they use; the image the page builds must be the one the overlays deploy.
 */
import assert from 'node:assert/strict';
import { exec } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Command } from 'commander';
import { registerDemoCommand } from '../../src/cli/commands/demo.js';
import type { RunningDemo } from '../../src/demo/run-demo.js';
import { startQuietDemo } from './quiet-demo.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createCertificateAuthority, createClientCertificate } from '../../src/sandbox/certs.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import type { Manifest } from '../deploy/kustomize.js';
import { fencedBlocks, readDoc, ROOT, shellCommands } from './doc-blocks.js';
import { eventually } from '../../testkit/eventually.js';

const page = fencedBlocks(readDoc('docs/quick-start.md'));
const run = (name: string) => page.filter((b) => b.marker === `run: ${name}`).flatMap((b) => shellCommands(b.text));

/** Runs one command line with bash; resolves with its output (async: the demo answers in this same process). */
function sh(command: string, options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string> {
  return new Promise((resolve, reject) => {
    exec(
      command,
      { shell: '/bin/bash', cwd: options.cwd, env: { ...process.env, ...options.env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${command}\nfailed: ${stderr || err.message}`));
        else resolve(stdout);
      },
    );
  });
}

// The two parts share nothing but the directory: they run at the same time.
describe('quick start', { concurrency: true }, () => {
  let demo: RunningDemo;
  let cluster: Sandbox;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-quick-start-'));
    [demo, cluster] = await Promise.all([startQuietDemo(dir), startSandbox({ seed: 'none', tls: true, logger: createSilentLogger() })]);
  });

  after(async () => {
    await Promise.all([demo?.close(), cluster?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  test('`npm run demo` is `outpost demo`, whose defaults are the addresses the page uses', () => {
    const first = page.find((b) => b.lang === 'sh')!;
    assert.deepEqual(shellCommands(first.text), ['npm ci', 'npm run demo']);
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.demo, 'node bin/outpost.js demo');
    const program = new Command();
    registerDemoCommand(program);
    const defaults = program.commands.find((c) => c.name() === 'demo')!.opts();
    assert.deepEqual(
      { http: defaults.httpPort, grpc: defaults.grpcPort, sandbox: defaults.sandboxPort, dir: defaults.dir },
      { http: 7002, grpc: 9091, sandbox: 6443, dir: '.outpost/demo' },
    );
  });

  test('part 1: the curl and kubectl commands against the demo, and the dashboard', async () => {
    const commands = run('demo');
    assert.ok(commands.length >= 6, 'the page has its demo commands');
    const local = (command: string) =>
      command.replaceAll('http://127.0.0.1:7002', demo.gateway.httpUrl).replaceAll('.outpost/demo/kubeconfig', demo.kubeconfigPath);
    const json = (out: string) => JSON.parse(out) as Record<string, any>;
    const checks: [RegExp, (out: string) => unknown][] = [
      [/\/health$/, (out) => (json(out).status === 'ok' ? true : undefined)],
      [/ListObjects$/, (out) => json(out).objects?.find((o: any) => o.kind === 'Deployment' && o.namespace === 'demo' && o.name === 'web')],
      [/\/armory\/accounts$/, (out) => json(out).items?.find((a: any) => a.name === 'sandbox' && a.state === 'ACTIVE')],
      [/\/armory\/agents$/, (out) => (json(out) as any[]).find?.((a) => a.agentId === 'demo-agent' && a.caching.includes('sandbox'))],
      [/scale deployment web --replicas 5$/, (out) => (out.trim() === 'deployment.apps/web scaled' ? true : undefined)],
      [/GetObject$/, (out) => (json(out).object?.object?.spec?.replicas === 5 ? true : undefined)],
      [/k8s\/sandbox get deployment web -n demo -o name$/, (out) => (out.trim() === 'deployment.apps/web' ? true : undefined)],
    ];
    for (const command of commands) {
      const check = checks.find(([re]) => re.test(command));
      assert.ok(check, `the test knows what to expect of: ${command}`);
      // Re-run until the check accepts the output (the cache follows the cluster within a moment).
      await eventually(
        `${command} gave the expected answer`,
        async () => {
          const out = await sh(local(command), { cwd: dir, env: { HOME: dir } });
          return check[1](out) ?? assert.fail(`last answer: ${out.slice(0, 400)}`);
        },
        { intervalMs: 200 },
      );
    }
    const dashboard = await fetch(`${demo.gateway.httpUrl}/`);
    assert.equal(dashboard.status, 200);
    assert.match(dashboard.headers.get('content-type') ?? '', /text\/html/);
    await dashboard.body?.cancel();
  });

  test('part 2: the image, the Secrets and the overlays, applied to a sandbox cluster', async () => {
    const image = run('image')[0]!.match(/-t (\S+)/)![1]!;
    const overlays = run('cluster').flatMap((c) => /^kubectl apply -k (\S+)$/.exec(c)?.[1] ?? []);
    assert.deepEqual(overlays, ['deploy/gateway/overlays/example', 'deploy/agent/overlays/cluster-wide']);

    // The mTLS guide's files, in the directory the commands run in (deploy/ reachable from it, as from the repository).
    const ca = await createCertificateAuthority({ hosts: ['outpost-grpc.example.com'] });
    const agentCert = await createClientCertificate(ca, 'agent-eu-1', 'agents');
    const files = {
      'ca.pem': ca.caPem,
      'gateway.pem': ca.certPem,
      'gateway-key.pem': ca.keyPem,
      'agent-eu-1.pem': agentCert.certPem,
      'agent-eu-1-key.pem': agentCert.keyPem,
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    symlinkSync(join(ROOT, 'deploy'), join(dir, 'deploy'));
    const kubeconfig = join(dir, 'cluster-kubeconfig');
    await cluster.writeKubeconfig(kubeconfig);
    const env = { KUBECONFIG: kubeconfig, HOME: dir, KUBECACHEDIR: join(dir, '.kube-cache') };
    for (const command of run('cluster')) await sh(command, { cwd: dir, env });

    // What `kubectl apply -k` rendered and applied: the page's image, and every Secret it reads, with its keys.
    const secretData = (ns: string, name: string) =>
      (cluster.store.list('v1', 'Secret', ns).find((s: any) => s.metadata.name === name) as { data?: Record<string, string> } | undefined)
        ?.data;
    for (const [overlay, namespace, name] of [
      ['deploy/gateway/overlays/example', 'outpost', 'outpost-gateway'],
      ['deploy/agent/overlays/cluster-wide', 'outpost-agent', 'outpost-agent'],
    ] as const) {
      const deployment = cluster.store.list('apps/v1', 'Deployment', namespace).find((d: any) => d.metadata.name === name) as
        | Manifest
        | undefined;
      assert.ok(deployment, `${overlay} was applied`);
      assert.equal(deployment.spec.template.spec.containers[0].image, image, `${overlay} deploys the image the page builds`);
      const pod = deployment.spec.template.spec;
      const wanted: [string, string[]][] = [
        ...pod.volumes
          .filter((v: any) => v.secret)
          .map((v: any) => [v.secret.secretName, volumeKeys(deployment, v.name)] as [string, string[]]),
        ...pod.containers.flatMap((c: any) =>
          (c.env ?? [])
            .filter((e: any) => e.valueFrom?.secretKeyRef)
            .map((e: any) => [e.valueFrom.secretKeyRef.name, [e.valueFrom.secretKeyRef.key]]),
        ),
      ];
      assert.ok(wanted.length >= 2, `${overlay} reads Secrets`);
      for (const [secret, keys] of wanted) {
        const data = secretData(namespace, secret);
        assert.ok(data, `${overlay}: the page creates Secret ${namespace}/${secret}`);
        for (const key of keys) assert.ok(data[key], `${overlay}: Secret ${namespace}/${secret} has the key ${key}`);
      }
    }
    // The agent's token is the one the gateway knows it by.
    assert.equal(
      secretData('outpost-agent', 'outpost-agent-token')!.token,
      secretData('outpost', 'outpost-gateway-tokens')!['agent-cluster-1'],
    );
  });
});

/** The keys of a Secret volume the container reads: the files under its mount that the config names, or all. */
function volumeKeys(deployment: Manifest, volume: string): string[] {
  const container = deployment.spec.template.spec.containers[0];
  const mount = container.volumeMounts.find((m: any) => m.name === volume);
  const text =
    JSON.stringify(deployment) +
    readFileSync(`${ROOT}deploy/gateway/base/gateway.yaml`, 'utf8') +
    readFileSync(`${ROOT}deploy/agent/base/agent.yaml`, 'utf8');
  const keys = [...text.matchAll(new RegExp(`${mount.mountPath}/([\\w.-]+)`, 'g'))].map((m) => m[1]!);
  return [...new Set(keys)];
}
