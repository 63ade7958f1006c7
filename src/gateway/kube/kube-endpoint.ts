/**
 * `/k8s/{account}/…` on the gateway's HTTP port (docs/kubectl.md): any Kubernetes API path and verb of a connected
 * cluster, for plain requests (HTTP/1.1 and h2) and upgrades (exec, attach, port-forward over WebSocket). In order,
 * before anything reaches an agent and before the body is read: the path, the credentials (the kube role), the account
 * allow rules, the identity mapping and the concurrency limits; then the request is carried over the account's agent
 * stream on this replica (kube-exchange.ts), or passed to the replica holding one (kube-forward.ts); at its end one
 * audit entry is recorded. Refusals are Kubernetes `Status` answers (kube-status.ts).
 */
import type http from 'node:http';
import type http2 from 'node:http2';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../shared/logger.js';
import type { SessionRegistry, LiveSession } from '../agents/session-registry.js';
import type { Authenticator } from '../auth/authenticator.js';
import { ConnectError } from '@connectrpc/connect';
import { credentialsFromNodeRequest } from '../auth/credentials.js';
import { hasRole, identityOf, mayUseKube, type Principal } from '../auth/principal.js';
import type { GatewayKubeConfig } from '../config/kube-schema.js';
import { HOP_BY_HOP, runExchange, type ExchangeOutcome, type ExchangeRequest } from './kube-exchange.js';
import { CALLER_HEADER, decodeCaller, type KubeForwarder } from './kube-forward.js';
import { kubeCallerOf, KubeIdentityError, type KubeCaller } from './kube-identity.js';
import { createKubeLimits } from './kube-limits.js';
import { kubeRequestInfo } from './kube-request-info.js';
import { kubePathProblem } from '../../shared/kube-path.js';
import { KubeRefusal, sendSocketStatus, sendStatus } from './kube-status.js';
import { runUpgradeExchange } from './kube-upgrade-exchange.js';
import type { AuditEntry, AuditLog } from '../audit/audit-log.js';
import type { KubeRecorder, KubeVia } from '../metrics/gateway-metrics.js';

/** The route's prefix. */
export const KUBE_PREFIX = '/k8s/';

/** Answered when this replica holds no stream for an account a replica forwarded to it (the forwarder forgets it). */
export const UNSERVED_HEADER = 'x-outpost-kube-unserved';

const ACCOUNT_NAME = /^[a-z0-9]([a-z0-9._-]{0,251}[a-z0-9])?$/;

type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;
type AnyResponse = http.ServerResponse | http2.Http2ServerResponse;

/** What {@link createKubeEndpoint} needs. */
export interface KubeEndpointDeps {
  gatewayId: string;
  authenticator: Authenticator;
  registry: SessionRegistry;
  config: GatewayKubeConfig;
  /** Passes requests on to other replicas; only local streams are used when absent. */
  forwarder?: KubeForwarder;
  /** Receives one entry per request; none when absent. */
  audit?: Pick<AuditLog, 'record'>;
  /** Counts requests; none when absent. */
  metrics?: KubeRecorder;
  logger: Logger;
}

/** See the module comment. */
export interface KubeEndpoint {
  /** Serves a plain request to a path under {@link KUBE_PREFIX}; resolves true when it was admitted (for the guard). */
  serve(req: AnyRequest, res: AnyResponse): Promise<boolean>;
  /** Serves an upgrade request to a path under {@link KUBE_PREFIX}; resolves true when it was admitted. */
  upgrade(req: http.IncomingMessage, socket: Duplex, rest: Buffer): Promise<boolean>;
}

/** True for paths the endpoint serves. */
export function isKubePath(url: string | undefined): boolean {
  return (url ?? '').startsWith(KUBE_PREFIX);
}

/** The session to carry a request for the account: the lease holder while its lease is valid, else one serving it. */
export function kubeSessionFor(registry: SessionRegistry, account: string): LiveSession | undefined {
  const lease = registry.leaseOf(account);
  if (lease && lease.validUntil > performance.now() && lease.session.serves(account)) return lease.session;
  return registry.all().find((s) => s.serves(account));
}

interface Admitted {
  account: string;
  path: string;
  caller: KubeCaller;
  forwarded: boolean;
  release: () => void;
}

/** Creates the endpoint. */
export function createKubeEndpoint(deps: KubeEndpointDeps): KubeEndpoint {
  const { config, logger } = deps;
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
    if (!ACCOUNT_NAME.test(account))
      throw new KubeRefusal(400, `"${account.slice(0, 100)}" is not an account name: use /k8s/{account}/api/…`);
    let path = slash < 0 ? '/' : rest.slice(slash);
    if (path.startsWith('?')) path = `/${path}`;
    const problem = kubePathProblem(path);
    if (problem) throw new KubeRefusal(400, `${problem} (below /k8s/{account})`);
    const forwardedCaller = req.headers[CALLER_HEADER];
    let principal: Principal;
    try {
      principal = await deps.authenticator.authenticate(credentialsFromNodeRequest(req));
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
        recordRefusal(identityOf(principal), account, (req.method ?? 'GET').toUpperCase(), path, err);
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

  function exchangeRequest(a: Admitted, req: AnyRequest, timeoutMs: number | undefined): ExchangeRequest {
    const headers: Array<{ name: string; value: string }> = [];
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || name.startsWith(':') || name === 'host' || name === 'authorization' || name === 'cookie') continue;
      if (name === CALLER_HEADER || name.startsWith('impersonate-') || (HOP_BY_HOP.has(name) && name !== 'upgrade')) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.push({ name, value: v });
    }
    return {
      account: a.account,
      method: (req.method ?? 'GET').toUpperCase(),
      path: a.path,
      headers,
      caller: a.caller,
      timeoutMs,
      tellImpersonation: a.forwarded,
    };
  }

  function record(a: Admitted, method: string, started: number, outcome: ExchangeOutcome): void {
    const info = kubeRequestInfo(method, a.path);
    // What is kept of a request: never a body (Secrets pass through here; their values are never recorded).
    const entry: AuditEntry = {
      kind: 'kube',
      operationId: '',
      principal: a.caller.principal,
      account: a.account,
      verb: info.verb,
      apiGroup: info.apiGroup,
      resource: info.resource,
      subresource: info.subresource,
      namespace: info.namespace,
      name: info.name,
      path: a.path.split('?')[0]!,
      status: outcome.status,
      bytesIn: outcome.bytesIn,
      bytesOut: outcome.bytesOut,
      durationMs: Math.round(performance.now() - started),
      impersonatedUser: outcome.impersonatedUser,
      impersonatedGroups: outcome.impersonatedGroups,
      gatewayId: deps.gatewayId,
      error: outcome.error,
      startedAt: new Date(Date.now() - (performance.now() - started)),
    };
    // A forwarded request is recorded by the replica the caller reached, not again here.
    if (!a.forwarded) deps.audit?.record(entry);
  }

  function recordRefusal(principal: string, account: string, method: string, path: string, refusal: KubeRefusal): void {
    const none = { bytesIn: 0, bytesOut: 0, impersonatedUser: '', impersonatedGroups: [] };
    const admitted: Admitted = { account, path, caller: { principal, user: '', groups: [] }, forwarded: false, release: () => {} };
    record(admitted, method, performance.now(), { ...none, status: refusal.status, error: refusal.message });
  }

  function unserved(account: string): KubeRefusal {
    return new KubeRefusal(503, `no agent stream serves account "${account}" on this replica; retry`, {
      [UNSERVED_HEADER]: '1',
      'retry-after': '1',
    });
  }

  return {
    async serve(req, res) {
      const started = performance.now();
      let admitted: Admitted;
      try {
        admitted = await admitRequest(req);
      } catch (err) {
        const refusal = toRefusal(err, logger);
        refuseUnread(req, res, refusal);
        deps.metrics?.kubeFinished('refused', refusal.status);
        return false;
      }
      const method = (req.method ?? 'GET').toUpperCase();
      let outcome: ExchangeOutcome = { status: 0, bytesIn: 0, bytesOut: 0, impersonatedUser: '', impersonatedGroups: [], error: '' };
      let via: KubeVia = 'local';
      deps.metrics?.kubeOpened();
      try {
        const info = kubeRequestInfo(method, admitted.path);
        // The caller's own `?timeout=` (kubectl --request-timeout) may shorten the deadline, never lengthen it.
        const limit = config.requestTimeoutSeconds * 1000;
        const timeoutMs = info.longRunning ? undefined : Math.min(limit, info.timeoutMs && info.timeoutMs > 0 ? info.timeoutMs : limit);
        const session = kubeSessionFor(deps.registry, admitted.account);
        if (session) {
          outcome = await runExchange(session, exchangeRequest(admitted, req, timeoutMs), req, res);
        } else {
          const target = admitted.forwarded ? undefined : await deps.forwarder?.target(admitted.account);
          via = target === undefined ? 'unserved' : 'forwarded';
          if (target === undefined) {
            const refusal = admitted.forwarded
              ? unserved(admitted.account)
              : new KubeRefusal(503, `no agent serves account "${admitted.account}" now`);
            sendStatus(res, refusal);
            outcome = {
              status: refusal.status,
              bytesIn: 0,
              bytesOut: 0,
              impersonatedUser: '',
              impersonatedGroups: [],
              error: refusal.message,
            };
          } else {
            outcome = await deps.forwarder!.forward(target, req.url!, admitted.caller, req, res);
            if (outcome.status === 503) deps.forwarder!.forget(admitted.account);
          }
        }
      } finally {
        admitted.release();
        deps.metrics?.kubeFinished(via, outcome.status);
      }
      record(admitted, method, started, outcome);
      return true;
    },

    async upgrade(req, socket, rest) {
      const started = performance.now();
      socket.on('error', () => {});
      let admitted: Admitted;
      try {
        admitted = await admitRequest(req, String(req.headers.upgrade ?? ''));
      } catch (err) {
        const refusal = toRefusal(err, logger);
        sendSocketStatus(socket, refusal);
        deps.metrics?.kubeFinished('refused', refusal.status);
        return false;
      }
      const method = (req.method ?? 'GET').toUpperCase();
      let outcome: ExchangeOutcome = { status: 0, bytesIn: 0, bytesOut: 0, impersonatedUser: '', impersonatedGroups: [], error: '' };
      let via: KubeVia = 'local';
      deps.metrics?.kubeOpened();
      try {
        const session = kubeSessionFor(deps.registry, admitted.account);
        if (session) {
          outcome = await runUpgradeExchange(session, exchangeRequest(admitted, req, undefined), socket, rest);
        } else {
          const target = admitted.forwarded ? undefined : await deps.forwarder?.target(admitted.account);
          via = target === undefined ? 'unserved' : 'forwarded';
          if (target === undefined) {
            const refusal = admitted.forwarded
              ? unserved(admitted.account)
              : new KubeRefusal(503, `no agent serves account "${admitted.account}" now`);
            sendSocketStatus(socket, refusal);
            outcome = {
              status: refusal.status,
              bytesIn: 0,
              bytesOut: 0,
              impersonatedUser: '',
              impersonatedGroups: [],
              error: refusal.message,
            };
          } else {
            outcome = await deps.forwarder!.forwardUpgrade(target, req.url!, admitted.caller, req, socket, rest);
          }
        }
      } finally {
        admitted.release();
        deps.metrics?.kubeFinished(via, outcome.status);
      }
      record(admitted, method, started, outcome);
      return true;
    },
  };
}

function toRefusal(err: unknown, logger: Logger): KubeRefusal {
  if (err instanceof KubeRefusal) return err;
  logger.error({ err }, 'Kubernetes API request failed');
  return new KubeRefusal(500, 'internal error');
}

/** Answers a refusal without reading the request body: HTTP/1.1 connections are closed after the answer. */
function refuseUnread(req: AnyRequest, res: AnyResponse, refusal: KubeRefusal): void {
  if (req.httpVersionMajor !== 2) {
    req.pause();
    (res as http.ServerResponse).setHeader('connection', 'close');
    res.once('finish', () => {
      const socket = req.socket;
      socket.end();
      setTimeout(() => socket.destroy(), 2000).unref();
    });
  } else {
    res.once('finish', () => {
      const stream = (res as http2.Http2ServerResponse).stream;
      if (!stream.closed) stream.close();
    });
  }
  sendStatus(res, refusal);
}
