/**
 * Runs `outpost kubeconfig` and `outpost credential` in-process (injected streams, environment and clock) and makes
 * the scratch files they read and write.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerCredentialCommand } from '../../src/cli/commands/credential.js';
import { registerKubeconfigCommand } from '../../src/cli/commands/kubeconfig.js';
import { type CliRun, runInProcess } from './captured-io.js';

/** Runs `outpost ARGS…` with only `kubeconfig` and `credential` registered. */
export function runKubeCli(args: string[], options: { env?: NodeJS.ProcessEnv; now?: Date } = {}): Promise<CliRun> {
  return runInProcess([registerKubeconfigCommand, registerCredentialCommand], args, {
    env: options.env ?? {},
    now: () => options.now ?? new Date(),
  });
}

/** A scratch directory; `file(name, text)` writes into it and returns the path. */
export interface Scratch {
  dir: string;
  file(name: string, text: string): string;
  cleanup(): void;
}

/** Creates a {@link Scratch}. */
export function createScratch(): Scratch {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-kubeconfig-'));
  return {
    dir,
    file(name, text) {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** An unsigned JWT with the given claims (the plugin reads `exp` only; the gateway verifies). */
export function fakeJwt(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}.${Buffer.from('signature').toString('base64url')}`;
}

/** A kubeconfig as kubectl writes it, with comments and two contexts of its own. */
export const EXISTING_KUBECONFIG = `# managed by hand: keep this comment
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM1ekNDQWMrZ0F3SUJBZ0lCQVRBTkJna3Foa2lHOXcwQkFRc0ZBREFWTVJNd0VRWURWUVFERXdwdGFXNXAKYTNWaVpVTkJNQjRYRFRJd01EUXhOakUzTVRjek4xb1hEVE13TURReE5URTNNVGN6TjFvd0ZURVRNQkVHQTFVRQo=
    server: https://10.0.0.1:6443
  name: prod # the production cluster
- cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
  name: kind-dev
contexts:
- context:
    cluster: prod
    namespace: payments
    user: admin
  name: prod
- context:
    cluster: kind-dev
    user: kind-dev
  name: kind-dev
current-context: prod
kind: Config
preferences: {}
users:
- name: admin
  user:
    client-certificate: /home/me/.kube/admin.crt
    client-key: /home/me/.kube/admin.key
- name: kind-dev
  user:
    token: 'dev-token'
`;
