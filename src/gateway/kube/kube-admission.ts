/**
 * Admission of a `/k8s/{account}/…` request (docs/kubectl.md), from its path and headers alone — before any body is
 * read and before anything reaches an agent: the path (one canonical form, src/shared/kube-path.ts), the credentials,
 * the role (`kube`), the upgrade protocol (WebSocket only), the account allow rules, the identity mapping, and a slot
 * under the concurrency limits. A request another replica forwarded (authenticated with the `replica` role, naming
 * its caller's principal in {@link CALLER_HEADER}) is admitted again as if its caller had come here: roles from this
 * replica's own rules, its account rule, its own identity mapping (docs/replicas.md). Throws a {@link KubeRefusal}; a
 * refusal after authentication is reported to `onRefused` (the audit log) — a caller header sent by anyone but a
 * replica included — an unauthenticated one is not, nor a replica's forward (the forwarding replica records the answer).
 */
import type http from 'node:http';
import type http2 from 'node:http2';
import { Code, ConnectError } from '@connectrpc/connect';
import { kubePathProblem } from '../../shared/kube-path.js';
import { isValidAccountName } from '../../shared/account-name.js';
import type { Authenticator } from '../auth/authenticator.js';
import { sessionCookieAcceptedOnKube } from '../auth/browser-session.js';
import { credentialsFromNodeRequest } from '../auth/credentials.js';
import { hasRole, identityOf, mayUseKube, type Principal } from '../auth/principal.js';
import { decodeDescription } from '../auth/vouched-principal.js';
import type { GatewayKubeConfig } from '../config/kube-schema.js';
import { CALLER_HEADER } from './kube-forward.js';
import { kubeCallerOf, type KubeCaller } from './kube-identity.js';
import { createKubeLimits } from './kube-limits.js';
import { KubeRefusal } from './kube-status.js';

/** The route's prefix. */
export const KUBE_PREFIX = '/k8s/';

type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;

/** An admitted request: where it goes, as whom, and its slot (release it once, when the request ends). */
export interface Admitted {
  account: string;
  /** Path and query below the cluster's API root, checked: later hops append it as text, never re-resolve it. */
  path: string;
  /** The caller (a forwarded request's: as vouched for, with this replica's roles). */
  principal: Principal;
  caller: KubeCaller;
  /** Forwarded by another replica (which recorded it, and counted it against the caller's identity). */
  forwarded: boolean;
  release: () => void;
}

/** Told about a refusal after authentication: who asked what, and the refusal. */
export type RefusalListener = (
  principal: string,
  groups: readonly string[],
  account: string,
  method: string,
  path: string,
  refusal: KubeRefusal,
) => void;

/** Admits one request (`upgrade`: the Upgrade header of an upgrade request); throws a {@link KubeRefusal}. */
export type KubeAdmission = (req: AnyRequest, upgrade?: string) => Promise<Admitted>;

/** Creates the admission, with its own concurrency limits. */
export function createKubeAdmission(authenticator: Authenticator, config: GatewayKubeConfig, onRefused: RefusalListener): KubeAdmission {
  const limits = createKubeLimits(config.maxConcurrentPerIdentity, config.maxConcurrentPerAccount);

  /** Everything that happens before the request may go anywhere; throws a refusal. */
  async function admitRequest(req: AnyRequest, upgrade?: string): Promise<Admitted> {
    if (!config.enabled) throw new KubeRefusal(404, 'kubectl through the gateway is disabled on this gateway (kube.enabled)');
    const { account, path } = target(req.url ?? '');
    const forwardedCaller = req.headers[CALLER_HEADER];
    let authenticated: Principal;
    try {
      const browser = sessionCookieAcceptedOnKube(req.method ?? 'GET', path.split('?')[0]!, upgrade !== undefined);
      authenticated = await authenticator.authenticate(credentialsFromNodeRequest(req, { browser }));
    } catch (err) {
      // A dashboard session whose request breaks the CSRF rules is known, and refused (the resolver audited it).
      const status = err instanceof ConnectError && err.code === Code.PermissionDenied ? 403 : 401;
      throw new KubeRefusal(status, err instanceof ConnectError ? err.rawMessage : 'authentication failed');
    }
    try {
      let principal = authenticated;
      if (forwardedCaller !== undefined) {
        // Only a replica may name a caller; the caller is then admitted here as if it had come here itself.
        if (!hasRole(authenticated, 'replica')) {
          throw new KubeRefusal(403, `${authenticated.subject} lacks the role "replica" required for /k8s/${account}`);
        }
        const description = decodeDescription(forwardedCaller);
        if (!description) throw new KubeRefusal(400, `malformed ${CALLER_HEADER} header`);
        principal = authenticator.vouched(description);
      }
      if (!hasRole(principal, 'kube')) {
        throw new KubeRefusal(403, `${principal.subject} lacks the role "kube" required for /k8s/${account}`);
      }
      if (upgrade !== undefined && !/^websocket$/i.test(upgrade)) {
        throw new KubeRefusal(
          400,
          `Outpost carries exec, attach and port-forward over WebSocket only, not "${upgrade.slice(0, 40)}": ` +
            'use kubectl 1.30 or later (1.29: KUBECTL_REMOTE_COMMAND_WEBSOCKETS=true; port-forward needs 1.31+)',
        );
      }
      return admitCaller(principal, account, path, forwardedCaller !== undefined);
    } catch (err) {
      // Refused after authentication (no kube role, an account not allowed, a limit, a caller header from anyone but a
      // replica): recorded, with who asked. An unauthenticated request is not: its caller is unknown, and a flood of
      // them must not fill the audit log. A replica's forward is recorded by the replica that forwarded it, which
      // records the answer (this refusal) as the request's end.
      const replicaForward = forwardedCaller !== undefined && hasRole(authenticated, 'replica');
      if (err instanceof KubeRefusal && !replicaForward) {
        onRefused(identityOf(authenticated), authenticated.groups ?? [], account, (req.method ?? 'GET').toUpperCase(), path, err);
      }
      throw err;
    }
  }

  function admitCaller(principal: Principal, account: string, path: string, forwarded: boolean): Admitted {
    if (!mayUseKube(principal, account)) {
      throw new KubeRefusal(403, `${principal.subject} may not reach account "${account}" (authorization.rules: kube role and accounts)`);
    }
    // A name that cannot be impersonated throws its own refusal (403, KubeIdentityError).
    const caller = kubeCallerOf(principal, config);
    const release = limits.acquire(forwarded ? undefined : caller.principal, account);
    return { account, path, principal, caller, forwarded, release };
  }

  return admitRequest;
}

/**
 * The account and the checked path of a request target (`/k8s/{account}/…`); throws a 400 refusal for anything that
 * is not one, before authentication. The path is the text the check saw, and what every later hop sends.
 */
function target(url: string): { account: string; path: string } {
  const rest = url.slice(KUBE_PREFIX.length);
  const slash = rest.search(/[/?]/);
  const [encoded, below] = slash < 0 ? [rest, '/'] : [rest.slice(0, slash), rest.slice(slash)];
  let account: string;
  try {
    account = decodeURIComponent(encoded);
  } catch {
    throw new KubeRefusal(400, 'the account name in the path is not valid percent-encoding');
  }
  if (!isValidAccountName(account))
    throw new KubeRefusal(400, `"${account.slice(0, 100)}" is not an account name: use /k8s/{account}/api/…`);
  const path = below.startsWith('?') ? `/${below}` : below;
  const problem = kubePathProblem(path);
  if (problem) throw new KubeRefusal(400, `${problem} (below /k8s/{account})`);
  return { account, path };
}
