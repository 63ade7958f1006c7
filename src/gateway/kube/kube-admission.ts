/**
 * Admission of a `/k8s/{account}/…` request (docs/kubectl.md), from its path and headers alone — before any body is
 * read and before anything reaches an agent: the path, the credentials, the role (`kube`; `replica` for a request
 * another replica forwarded, which names its caller), the upgrade protocol (WebSocket only), the account allow rules,
 * the identity mapping, and a slot under the concurrency limits. Throws a {@link KubeRefusal}; a refusal after
 * authentication is reported to `onRefused` (the audit log), an unauthenticated one is not.
 */
import type http from 'node:http';
import type http2 from 'node:http2';
import { ConnectError } from '@connectrpc/connect';
import { kubePathProblem } from '../../shared/kube-path.js';
import { isValidAccountName } from '../accounts/account-name.js';
import type { Authenticator } from '../auth/authenticator.js';
import { credentialsFromNodeRequest } from '../auth/credentials.js';
import { hasRole, identityOf, mayUseKube, type Principal } from '../auth/principal.js';
import type { GatewayKubeConfig } from '../config/kube-schema.js';
import { CALLER_HEADER, decodeCaller } from './kube-forward.js';
import { kubeCallerOf, KubeIdentityError, type KubeCaller } from './kube-identity.js';
import { createKubeLimits } from './kube-limits.js';
import { KubeRefusal } from './kube-status.js';

/** The route's prefix. */
export const KUBE_PREFIX = '/k8s/';

type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;

/** An admitted request: where it goes, as whom, and its slot (release it once, when the request ends). */
export interface Admitted {
  account: string;
  /** Path and query below the cluster's API root. */
  path: string;
  caller: KubeCaller;
  /** Forwarded by another replica (which recorded it, and counted it against the caller's identity). */
  forwarded: boolean;
  release: () => void;
}

/** Told about a refusal after authentication: who asked what, and the refusal. */
export type RefusalListener = (principal: string, account: string, method: string, path: string, refusal: KubeRefusal) => void;

/** Admits one request (`upgrade`: the Upgrade header of an upgrade request); throws a {@link KubeRefusal}. */
export type KubeAdmission = (req: AnyRequest, upgrade?: string) => Promise<Admitted>;

/** Creates the admission, with its own concurrency limits. */
export function createKubeAdmission(authenticator: Authenticator, config: GatewayKubeConfig, onRefused: RefusalListener): KubeAdmission {
  const limits = createKubeLimits(config.maxConcurrentPerIdentity, config.maxConcurrentPerAccount);

  /** Everything that happens before the request may go anywhere; throws a refusal. */
  async function admitRequest(req: AnyRequest, upgrade?: string): Promise<Admitted> {
    if (!config.enabled) throw new KubeRefusal(404, 'kubectl through the gateway is disabled on this gateway (kube.enabled)');
    const url = req.url ?? '';
    const rest = url.slice(KUBE_PREFIX.length);
    const slash = rest.search(/[/?]/);
    const encoded = slash < 0 ? rest : rest.slice(0, slash);
    let account: string;
    try {
      account = decodeURIComponent(encoded);
    } catch {
      throw new KubeRefusal(400, 'the account name in the path is not valid percent-encoding');
    }
    if (!isValidAccountName(account))
      throw new KubeRefusal(400, `"${account.slice(0, 100)}" is not an account name: use /k8s/{account}/api/…`);
    let path = slash < 0 ? '/' : rest.slice(slash);
    if (path.startsWith('?')) path = `/${path}`;
    const problem = kubePathProblem(path);
    if (problem) throw new KubeRefusal(400, `${problem} (below /k8s/{account})`);
    const forwardedCaller = req.headers[CALLER_HEADER];
    let principal: Principal;
    try {
      principal = await authenticator.authenticate(credentialsFromNodeRequest(req));
    } catch (err) {
      throw new KubeRefusal(401, err instanceof ConnectError ? err.rawMessage : 'authentication failed');
    }
    try {
      const requirement = forwardedCaller === undefined ? 'kube' : 'replica';
      if (!hasRole(principal, requirement)) {
        throw new KubeRefusal(403, `${principal.subject} lacks the role "${requirement}" required for /k8s/${account}`);
      }
      if (upgrade !== undefined && !/^websocket$/i.test(upgrade)) {
        throw new KubeRefusal(
          400,
          `Outpost carries exec, attach and port-forward over WebSocket only, not "${upgrade.slice(0, 40)}": ` +
            'use kubectl 1.30 or later (1.29: KUBECTL_REMOTE_COMMAND_WEBSOCKETS=true; port-forward needs 1.31+)',
        );
      }
      return admitCaller(req, principal, account, path);
    } catch (err) {
      // Refused after authentication (no kube role, an account not allowed, a limit): recorded, with who asked. An
      // unauthenticated request is not: its caller is unknown, and a flood of them must not fill the audit log.
      if (err instanceof KubeRefusal && forwardedCaller === undefined) {
        onRefused(identityOf(principal), account, (req.method ?? 'GET').toUpperCase(), path, err);
      }
      throw err;
    }
  }

  function admitCaller(req: AnyRequest, principal: Principal, account: string, path: string): Admitted {
    const forwardedCaller = req.headers[CALLER_HEADER];
    let caller: KubeCaller;
    if (forwardedCaller !== undefined) {
      const decoded = decodeCaller(forwardedCaller);
      if (!decoded) throw new KubeRefusal(400, `malformed ${CALLER_HEADER} header`);
      // The forwarding replica mapped it with the same rules; a system: name never comes from one.
      if ([decoded.user, ...decoded.groups].some((name) => name.startsWith('system:'))) {
        throw new KubeRefusal(403, `${CALLER_HEADER} names a system: identity`);
      }
      caller = decoded;
    } else {
      if (!mayUseKube(principal, account)) {
        throw new KubeRefusal(403, `${principal.subject} may not reach account "${account}" (authorization.rules: kube role and accounts)`);
      }
      try {
        caller = kubeCallerOf(principal, config);
      } catch (err) {
        if (err instanceof KubeIdentityError) throw new KubeRefusal(403, err.message);
        throw err;
      }
    }
    const forwarded = forwardedCaller !== undefined;
    const release = limits.acquire(forwarded ? undefined : caller.principal, account);
    return { account, path, caller, forwarded, release };
  }

  return admitRequest;
}
