/**
 * Scenario — Spinnaker deploy → stable: a sandbox (TLS, so kubectl sends its token), one gateway and one agent. Each
 * round rolls a Deployment to a new image both ways, in ABBA order: through Outpost as Orca does it
 * (`POST /kubernetes/ops` deployManifest, poll `GET /task/{id}` until completed, then poll `GET /manifests/…` until
 * `status.stable`), and with `kubectl apply -f -` + `kubectl rollout status` straight against the sandbox — the same
 * manifest (another name), the same cluster, in the same run. Polls every 20 ms (Orca waits 5 s between polls:
 * what is measured is what Outpost adds, not Orca's back-off).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { summarize } from '../machine.js';
import { readAccount, startReplicaSet } from '../replicas.js';
import { figureRow, type Row } from '../rows.js';

/** Parameters of one run. */
export interface SpinnakerDeployParams {
  postgresUrl: string;
  /** Measured rounds (one rollout per side each). */
  rounds: number;
  warmup: number;
  replicas: number;
}

/** Figures (milliseconds). */
export interface SpinnakerDeployResult {
  rounds: number;
  outpost: ReturnType<typeof summarize>;
  kubectl: ReturnType<typeof summarize>;
  /** outpost p50 / kubectl p50. */
  ratio: number;
}

const ACCOUNT = 'bench';
const POLL_MS = 20;

const deployment = (name: string, image: string, replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'demo' },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
  },
});

function run(bin: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(bin, args, { env, timeout: 120_000 }, (err, _stdout, stderr) =>
      err ? reject(new Error(`${bin} ${args.join(' ')}: ${stderr || err.message}`)) : resolve(),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** Deploy through the Clouddriver API and poll as Orca does until stable; returns the milliseconds. */
async function viaOutpost(httpUrl: string, image: string, replicas: number): Promise<number> {
  const t0 = performance.now();
  const ops = [
    {
      deployManifest: {
        account: ACCOUNT,
        cloudProvider: 'kubernetes',
        source: 'text',
        manifests: [deployment('bench-outpost', image, replicas)],
        moniker: { app: 'bench' },
      },
    },
  ];
  const submitted = await json(`${httpUrl}/kubernetes/ops`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ops),
  });
  if (submitted.status !== 200) throw new Error(`submit: ${submitted.status} ${JSON.stringify(submitted.body)}`);
  for (;;) {
    const task = await json(`${httpUrl}/task/${submitted.body.id}`);
    if (task.body.status?.failed) throw new Error(`task failed: ${JSON.stringify(task.body.resultObjects)}`);
    if (task.body.status?.completed) break;
    await sleep(POLL_MS);
  }
  for (;;) {
    const manifest = await json(`${httpUrl}/manifests/${ACCOUNT}/demo/deployment%20bench-outpost?includeEvents=false`);
    if (manifest.status === 200 && manifest.body.status?.stable?.state) return performance.now() - t0;
    await sleep(POLL_MS);
  }
}

/** Runs the scenario. */
export async function runSpinnakerDeploy(params: SpinnakerDeployParams): Promise<SpinnakerDeployResult> {
  const set = await startReplicaSet({
    postgresUrl: params.postgresUrl,
    gateways: ['gw-1'],
    gatewayConfig: {},
    logLevel: 'info',
    prefix: 'outpost-bench-spinnaker-',
    sandboxArgs: ['--tls'],
  });
  const home = mkdtempSync(join(tmpdir(), 'outpost-bench-kubectl-'));
  let failed = true;
  try {
    set.startAgent('bench-agent', ACCOUNT, `127.0.0.1:${set.replica('gw-1').grpcPort}`, {
      kubernetes: { accounts: [{ name: ACCOUNT, kubeconfigFile: set.kubeconfig, namespaces: ['demo'] }] },
    });
    const httpUrl = set.replica('gw-1').httpUrl;
    for (const deadline = Date.now() + 90_000; (await readAccount(httpUrl, ACCOUNT))?.state !== 'ACTIVE'; await sleep(200)) {
      set.checkAlive();
      if (Date.now() > deadline) throw new Error('the agent did not register the account within 90 s');
    }
    const env = { ...process.env, HOME: home, KUBECACHEDIR: join(home, 'cache'), KUBECONFIG: set.kubeconfig };
    const viaKubectl = async (image: string) => {
      const t0 = performance.now();
      await run('kubectl', ['apply', '-f', '-'], env, JSON.stringify(deployment('bench-kubectl', image, params.replicas)));
      await run('kubectl', ['rollout', 'status', '-n', 'demo', 'deployment/bench-kubectl', '--timeout=60s'], env);
      return performance.now() - t0;
    };
    const samples = { outpost: [] as number[], kubectl: [] as number[] };
    for (let i = 0; i < params.warmup + params.rounds; i++) {
      const image = `nginx:1.${i}`;
      const order = i % 2 === 0 ? (['outpost', 'kubectl'] as const) : (['kubectl', 'outpost'] as const);
      for (const side of order) {
        const ms = side === 'outpost' ? await viaOutpost(httpUrl, image, params.replicas) : await viaKubectl(image);
        if (i >= params.warmup) samples[side].push(ms);
      }
    }
    const outpost = summarize(samples.outpost);
    const kubectl = summarize(samples.kubectl);
    failed = false;
    return { rounds: params.rounds, outpost, kubectl, ratio: outpost.p50 / kubectl.p50 };
  } finally {
    rmSync(home, { recursive: true, force: true });
    await set.close(failed);
  }
}

/** Table rows of the run. */
export function spinnakerDeployRows(r: SpinnakerDeployResult): Row[] {
  const s = 'spinnaker deploy → stable';
  return [
    figureRow(s, `through Outpost (deployManifest, task and manifest polled), p50 ms (${r.rounds} rollouts)`, [r.outpost.p50], {
      digits: 0,
    }),
    figureRow(s, 'kubectl apply + rollout status straight to the cluster, p50 ms', [r.kubectl.p50], { digits: 0 }),
    figureRow(s, 'Outpost / kubectl, p50 (same manifests, same run)', [r.ratio], { digits: 2 }),
    figureRow(s, 'through Outpost, p90 ms', [r.outpost.p90], { digits: 0 }),
  ];
}
