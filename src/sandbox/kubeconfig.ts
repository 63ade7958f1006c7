/**
 * Renders the kubeconfig the sandbox writes for its users, so `kubectl --kubeconfig` and `@kubernetes/client-node`
 * (`KubeConfig.loadFromFile`) talk to it with a bearer token per user.
 */
import { stringify } from 'yaml';

/** One kubeconfig user: a name and its bearer token. */
interface KubeconfigUser {
  name: string;
  token: string;
}

/** Options of {@link renderKubeconfig}. */
export interface RenderKubeconfigOptions {
  /** API server URL, e.g. `https://127.0.0.1:6443` or `http://127.0.0.1:8080`. */
  server: string;
  /** CA certificate (PEM) clients must trust; omit for plain http, which sets `insecure-skip-tls-verify`. */
  caPem?: string;
  /** Users in order; the first is the admin user, whose context is named `sandbox`. */
  users: KubeconfigUser[];
  /** Name of the user whose context becomes `current-context`; must be one of `users`. */
  currentUser: string;
}

/** The context name for a user: `sandbox` for the first (admin) user, `sandbox-<name>` for the others. */
function kubeconfigContextName(users: KubeconfigUser[], name: string): string {
  return users[0]?.name === name ? 'sandbox' : `sandbox-${name}`;
}

/**
 * Returns kubeconfig YAML with one cluster `sandbox`, one user per entry (token auth) and one context per user.
 * Throws when `users` is empty, names repeat, or `currentUser` is not among them.
 */
export function renderKubeconfig(opts: RenderKubeconfigOptions): string {
  if (opts.users.length === 0) throw new Error('renderKubeconfig: at least one user is required');
  const names = new Set<string>();
  for (const u of opts.users) {
    if (!u.name) throw new Error('renderKubeconfig: user names must be non-empty');
    if (names.has(u.name)) throw new Error(`renderKubeconfig: duplicate user "${u.name}"`);
    names.add(u.name);
  }
  if (!names.has(opts.currentUser)) {
    throw new Error(`renderKubeconfig: current user "${opts.currentUser}" is not among the users`);
  }
  const cluster: Record<string, unknown> = { server: opts.server };
  if (opts.caPem) cluster['certificate-authority-data'] = Buffer.from(opts.caPem, 'utf8').toString('base64');
  else cluster['insecure-skip-tls-verify'] = true;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [{ name: 'sandbox', cluster }],
    users: opts.users.map((u) => ({ name: u.name, user: { token: u.token } })),
    contexts: opts.users.map((u) => ({
      name: kubeconfigContextName(opts.users, u.name),
      context: { cluster: 'sandbox', user: u.name, namespace: 'default' },
    })),
    'current-context': kubeconfigContextName(opts.users, opts.currentUser),
  };
  return stringify(doc);
}
