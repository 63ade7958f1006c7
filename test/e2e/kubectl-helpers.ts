/**
 * What the kubectl-through-the-gateway tests share: a TLS gateway with token identities (kubectl sends bearer tokens
 * over TLS only), an agent serving the sandbox, RBAC in the sandbox for the impersonated users, and a kubectl whose
 * kubeconfig points at `/k8s/sandbox` with one of the tokens.
 */
import { existsSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startGateway, type GatewayConfigInput, type RunningGateway } from '../../src/gateway/index.js';
import { createSilentLogger, type Logger } from '../../src/shared/logger.js';
import { waitForCacheToMatch } from '../../testkit/cache-compare.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { testGatewayConfig } from '../../testkit/test-gateway.js';
import { createTestPki, type TestPki } from '../../testkit/auth-helpers.js';
import { runKubeCli } from '../cli/kubeconfig-helpers.js';
import { createKubectl, createKubectlWith, type Kubectl } from '../../testkit/kubectl-runner.js';

const SDK = '/usr/lib/google-cloud-sdk/bin';
/** The kubectl versions the tests run, oldest and newest installed. */
export const KUBECTLS = [
  // 1.27 validates against OpenAPI v2, which the sandbox does not serve.
  { label: 'kubectl 1.27', bin: `${SDK}/kubectl.1.27`, websocket: false, applyFlags: ['--validate=false'] },
  { label: 'kubectl 1.33', bin: `${SDK}/kubectl.1.33`, websocket: true, applyFlags: [] },
].filter((k) => existsSync(k.bin));

/** Tokens of the test identities. */
export const TOKENS = {
  agent: 'agent-token-0123456789abcdef',
  /** kube role for the sandbox account, group devs. */
  alice: 'alice-token-0123456789abcdef',
  /** read only: no kube role. */
  bob: 'bob-token-0123456789abcdef0',
  /** kube role, but for other accounts only. */
  carol: 'carol-token-0123456789abcdef',
  /** kube role for the sandbox account, no groups. */
  dave: 'dave-token-0123456789abcdef0',
  /** admin: reads the audit log. */
  erin: 'erin-token-0123456789abcdef0',
} as const;

/** The gateway's security settings: TLS, the tokens, the rules. */
export function secureGateway(pki: TestPki, dir: string, extra: GatewayConfigInput = {}): GatewayConfigInput {
  const secretFile = join(dir, 'replica-secret');
  writeFileSync(secretFile, 'replica-secret-0123456789-0123456789-abcdef');
  return {
    insecure: false,
    tls: { certFile: pki.certFile, keyFile: pki.keyFile, caFile: pki.caFile },
    auth: {
      readAccess: 'open',
      replicaSecretFile: secretFile,
      tokens: [
        { subject: 'agent', token: TOKENS.agent },
        { subject: 'alice', token: TOKENS.alice, groups: ['devs'] },
        { subject: 'bob', token: TOKENS.bob },
        { subject: 'carol', token: TOKENS.carol },
        { subject: 'dave', token: TOKENS.dave },
        { subject: 'erin', token: TOKENS.erin },
      ],
    },
    authorization: {
      rules: [
        { kind: 'token', subject: '^agent$', roles: ['agent'], accounts: ['*'] },
        { kind: 'token', subject: '^alice$', roles: ['kube', 'read'], accounts: ['sandbox', 'second'] },
        { kind: 'token', subject: '^dave$', roles: ['kube'], accounts: ['sandbox'] },
        { kind: 'token', subject: '^erin$', roles: ['admin', 'read'] },
        { kind: 'token', subject: '^bob$', roles: ['read', 'write'], accounts: ['*'] },
        { kind: 'token', subject: '^carol$', roles: ['kube'], accounts: ['other-*'] },
      ],
    },
    ...extra,
  };
}

/**
 * The sandbox's RBAC for the impersonated users: `outpost:alice` (through group `outpost:devs`) and `outpost:dave` may read pods and
 * their logs, exec, attach and port-forward, and do anything with ConfigMaps in namespace `demo`; nothing else.
 */
export const ALICE_RBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: outpost-devs, namespace: demo}
rules:
- apiGroups: [""]
  resources: [pods, pods/log]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [pods/exec, pods/attach, pods/portforward]
  verbs: [get, create]
- apiGroups: [""]
  resources: [configmaps]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: outpost-devs, namespace: demo}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: outpost-devs}
subjects:
- {kind: Group, name: "outpost:devs", apiGroup: rbac.authorization.k8s.io}
- {kind: User, name: "outpost:dave", apiGroup: rbac.authorization.k8s.io}
`;

/** Options of {@link startKubeStack}. */
export interface KubeStackOptions {
  driver?: 'pglite' | 'postgres';
  gateway?: GatewayConfigInput;
  logger?: Logger;
  agentLogger?: Logger;
  /** Wait until the agent's cache matches the sandbox (every watch open) before resolving. */
  waitForCache?: boolean;
  /**
   * More accounts of the agent, each a kubeconfig file (a second sandbox, say; the stack's own sandbox when absent),
   * with more account settings (`kubeProxy`…) if given.
   */
  extraAccounts?: Array<{ name: string; kubeconfigFile?: string } & Record<string, unknown>>;
}

/** A running stack for the kubectl tests. */
export interface KubeStack {
  stack: Stack;
  pki: TestPki;
  /** kubectl straight to the sandbox as its admin. */
  admin: Kubectl;
  close(): Promise<void>;
}

/** Starts sandbox, TLS gateway and agent, and applies {@link ALICE_RBAC}. */
export async function startKubeStack(options: KubeStackOptions = {}): Promise<KubeStack> {
  const pki = await createTestPki();
  const stack = await startStack({
    driver: options.driver,
    logger: options.logger,
    // kubectl sends credentials over TLS only.
    sandbox: { tls: true },
    gateway: (dir) => secureGateway(pki, dir, options.gateway),
  });
  try {
    await stack.startAgent({
      config: {
        clouddriver: { insecure: false, tls: { cacertFile: pki.caFile }, auth: { token: TOKENS.agent } },
        kubernetes: {
          accounts: [
            { name: 'sandbox', kubeconfigFile: stack.kubeconfig },
            ...(options.extraAccounts ?? []).map((a) => ({ ...a, kubeconfigFile: a.kubeconfigFile ?? stack.kubeconfig })),
          ],
        },
      },
      ...(options.agentLogger ? { logger: options.agentLogger } : {}),
    });
    await eventually('account sandbox ACTIVE with an agent', async () => {
      // As erin (admin, read): also where the gateway's readAccess is `authenticated`.
      const headers = { authorization: `Bearer ${TOKENS.erin}` };
      const answer = await httpsRequest(`${stack.gateway.httpUrl}/armory/accounts/sandbox`, { ca: pki.caPem, headers });
      const account = JSON.parse(answer.body) as { state?: string };
      if (account.state !== 'ACTIVE') throw new Error(`state ${account.state}`);
      return true;
    });
    // Every watch of the agent is open once its cache matches (for tests that count the sandbox's open watches).
    if (options.waitForCache) await waitForCacheToMatch(stack.gateway.database, stack.sandbox, 'sandbox', { timeoutMs: 60_000 });
    const admin = await createKubectl(KUBECTLS.at(-1)?.bin ?? '/usr/bin/kubectl', stack.sandbox);
    await admin.ok(['apply', '-f', '-'], { input: ALICE_RBAC });
    return {
      stack,
      pki,
      admin,
      async close() {
        admin.cleanup();
        await stack.close();
        pki.remove();
      },
    };
  } catch (err) {
    await stack.close();
    pki.remove();
    throw err;
  }
}

/**
 * Another gateway replica on the stack's database (ephemeral ports, silent): the settings of {@link secureGateway}
 * with `overrides` over them (whole top-level sections). Close it before the stack.
 */
export function startKubeReplica(k: KubeStack, id: string, overrides: GatewayConfigInput = {}): Promise<RunningGateway> {
  return startGateway(testGatewayConfig(k.stack.database.url, { id, ...secureGateway(k.pki, k.stack.dir, overrides) }), {
    logger: createSilentLogger(),
  });
}

/**
 * A kubectl whose kubeconfig `outpost kubeconfig` wrote (the way users set it up): context `outpost-{account}` on the
 * gateway's `/k8s/{account}`, current, with `token` from OUTPOST_TOKEN and the gateway's CA.
 */
export function gatewayKubectl(bin: string, gatewayUrl: string, caFile: string, token: string, account = 'sandbox'): Promise<Kubectl> {
  return createKubectlWith(bin, async (path) => {
    const args = ['kubeconfig', '--account', account, '--gateway', gatewayUrl, '--ca-file', caFile, '--kubeconfig', path, '--set-current'];
    const run = await runKubeCli(args, { env: { OUTPOST_TOKEN: token } });
    if (run.code !== 0) throw new Error(`outpost kubeconfig failed (${run.code}): ${run.err}`);
  });
}

/** One HTTPS request with a CA (fetch takes none): status, headers and body text. */
export function httpsRequest(
  url: string,
  options: { ca: string; method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    // The path is sent as written (a URL would resolve its dot segments first).
    const parsed = new URL(url);
    const path = url.slice(parsed.origin.length);
    const request = {
      hostname: parsed.hostname,
      port: parsed.port,
      path,
      method: options.method ?? 'GET',
      headers: options.headers,
      ca: options.ca,
    };
    const req = https.request(request, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** One audit event as ListAuditEvents answers it (Connect JSON). */
export interface AuditEventJson {
  /** `started` (admitted, not ended when written) or `completed`. */
  stage?: string;
  /** Shared by a request's `started` and `completed` entries. */
  requestId?: string;
  durationMs?: string;
  principal: string;
  account: string;
  verb: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  status?: number;
  bytesOut?: string;
  impersonatedUser?: string;
  impersonatedGroups?: string[];
  /** The caller's own groups (unprefixed). */
  groups?: string[];
  error?: string;
}

/** Every audit event of a principal, through the RPC (an admin token), newest first. */
export async function auditEvents(gatewayUrl: string, ca: string, principal: string): Promise<AuditEventJson[]> {
  const answer = await httpsRequest(`${gatewayUrl}/outpost.api.v1.AuditService/ListAuditEvents`, {
    ca,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.erin}` },
    body: JSON.stringify({ principal, pageSize: 500 }),
  });
  if (answer.status !== 200) throw new Error(`ListAuditEvents answered ${answer.status}: ${answer.body}`);
  return (JSON.parse(answer.body) as { events?: AuditEventJson[] }).events ?? [];
}

/** An open watch: resolves once its answer's headers came; `ended` resolves when its answer ends in any way. */
export interface OpenWatch {
  status: number;
  ended: Promise<void>;
  isEnded(): boolean;
  /** Goes away (as a stopped `kubectl get -w`). */
  close(): void;
}

/** Opens a watch of ConfigMaps labelled `marker=<marker>` in namespace demo of account sandbox (as alice by default). */
export function openWatch(gatewayUrl: string, ca: string, marker: string, token: string = TOKENS.alice): Promise<OpenWatch> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${gatewayUrl}/k8s/sandbox/api/v1/namespaces/demo/configmaps?watch=1&labelSelector=marker%3D${marker}`, {
      ca,
      agent: false,
      headers: { authorization: `Bearer ${token}` },
    });
    req.on('response', (res) => {
      let over = false;
      const ended = new Promise<void>((done) => {
        const end = () => {
          over = true;
          done();
        };
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
        req.on('error', end);
      });
      res.resume();
      resolve({ status: res.statusCode ?? 0, ended, isEnded: () => over, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends one line to a local port (a kubectl port-forward) and resolves with the first line that comes back. */
export function echoThrough(port: number, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(line));
    let got = '';
    socket.on('data', (c: Buffer) => {
      got += c.toString('utf8');
      if (got.includes('\n')) {
        socket.end();
        resolve(got);
      }
    });
    socket.on('error', reject);
  });
}

/** The first pod of the demo's web Deployment, as the sandbox's admin sees it. */
export async function webPod(admin: Kubectl): Promise<string> {
  const out = await admin.ok(['get', 'pods', '-n', 'demo', '-o', 'jsonpath={.items[*].metadata.name}']);
  const pod = out.split(/\s+/).find((n) => n.startsWith('web-'));
  if (!pod) throw new Error(`no web pod in: ${out}`);
  return pod;
}
