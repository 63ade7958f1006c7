/**
 * `outpost demo`: the whole system on one machine — a seeded sandbox cluster, a gateway on the embedded database and
 * an agent for account `sandbox` — with the URLs and ready-to-paste commands printed. Used by `npm run demo`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startAgent, loadAgentConfig, type RunningAgent } from '../agent/index.js';
import { outpostEntryPath } from '../client/outpost-entry.js';
import { loadGatewayConfig, startGateway, type RunningGateway } from '../gateway/index.js';
import { startSandbox, type Sandbox } from '../sandbox/index.js';
import type { Logger } from '../shared/logger.js';

/** Options of the demo; every port can be moved when the default is taken. */
export interface DemoOptions {
  dir: string;
  sandboxPort: number;
  httpPort: number;
  grpcPort: number;
  agentPort: number;
  database: string;
  logger: Logger;
  /**
   * The sandbox's pace (see `SandboxOptions`): how long a new pod stays Pending, and how long a started pod stays
   * Running but not Ready. Unset: the sandbox's defaults (30 ms, 0 ms), so a rollout is over in a moment; a ready
   * delay of a second or two makes each step of a rolling update visible in the dashboard and Spinnaker.
   */
  podStartDelayMs?: number;
  podReadyDelayMs?: number;
}

/** The running demo; `close()` stops agent, gateway and sandbox in that order. */
export interface RunningDemo {
  readonly sandbox: Sandbox;
  readonly gateway: RunningGateway;
  readonly agent: RunningAgent;
  readonly kubeconfigPath: string;
  /** The text printed for the user: URLs and commands to paste. */
  readonly banner: string;
  close(): Promise<void>;
}

/** `word` as one shell word: as it is when it is plain, else in single quotes. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/** Starts the three parts; on failure, stops whatever already started and rethrows. */
export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    stops.length = 0;
  };
  try {
    // TLS: kubectl never sends a bearer token over plain HTTP, and a real cluster has a CA fingerprint to bind.
    const sandbox = await startSandbox({
      port: options.sandboxPort,
      seed: 'demo',
      tls: true,
      podStartDelayMs: options.podStartDelayMs,
      podReadyDelayMs: options.podReadyDelayMs,
      logger: options.logger.child({ component: 'sandbox' }),
    });
    stops.push(() => sandbox.close());
    // kubectl through the gateway (docs/kubectl.md): the insecure demo gateway's caller is impersonated as
    // `outpost:anonymous`; the demo cluster lets that user do anything, as a real cluster's admin would decide.
    sandbox.store.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'outpost-demo-kubectl' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'outpost:anonymous' }],
    });
    const kubeconfigPath = join(dir, 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfigPath);

    const gatewayConfig = loadGatewayConfig({
      env: {},
      overrides: {
        httpPort: options.httpPort,
        grpcPort: options.grpcPort,
        host: '127.0.0.1',
        database: options.database,
        id: 'demo-gateway',
        insecure: true,
      },
    });
    const gateway = await startGateway(gatewayConfig, { logger: options.logger.child({ component: 'gateway' }) });
    stops.push(() => gateway.close());

    const agentConfigPath = join(dir, 'agent.yaml');
    const grpcAddress = new URL(gateway.grpcUrl).host;
    writeFileSync(
      agentConfigPath,
      [
        '# Written by `outpost demo`: an agent for the sandbox cluster.',
        'clouddriver:',
        `  grpc: ${grpcAddress}`,
        '  insecure: true',
        'agent:',
        '  id: demo-agent',
        'server:',
        `  port: ${options.agentPort}`,
        'kubernetes:',
        '  accounts:',
        '    - name: sandbox',
        `      kubeconfigFile: ${kubeconfigPath}`,
        '',
      ].join('\n'),
    );
    const agent = await startAgent(loadAgentConfig(agentConfigPath, {}), { logger: options.logger.child({ component: 'agent' }) });
    stops.push(() => agent.close());

    const banner = [
      '',
      'Outpost demo is running.',
      `  sandbox Kubernetes API  ${sandbox.url}   (kubeconfig: ${kubeconfigPath})`,
      `  dashboard               ${gateway.httpUrl}/   (open it in a browser)`,
      `  gateway HTTP            ${gateway.httpUrl}   (Connect JSON, REST: ${gateway.httpUrl}/health)`,
      `  gateway gRPC            ${gateway.grpcUrl}   (agents connect here)`,
      '  agent                   demo-agent, account "sandbox"',
      '',
      'Try:',
      `  curl -s -H 'Content-Type: application/json' -d '{"account":"sandbox","kind":"Deployment","omitObject":true}' ${gateway.httpUrl}/outpost.api.v1.ObjectService/ListObjects`,
      `  kubectl --kubeconfig ${kubeconfigPath} -n demo scale deployment web --replicas 5`,
      `  ${shellWord(outpostEntryPath())} get deployments -n demo --gateway ${gateway.httpUrl}`,
      `    (the outpost CLI: export OUTPOST_GATEWAY=${gateway.httpUrl} and --gateway can go; OUTPOST_ACCOUNT=NAME stands`,
      '     for --account, which a gateway with one account, as this one, does not need)',
      '',
      'Press Ctrl-C to stop.',
      '',
    ].join('\n');
    return { sandbox, gateway, agent, kubeconfigPath, banner, close: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
