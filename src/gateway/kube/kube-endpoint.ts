/**
 * `/k8s/{account}/…` on the gateway's HTTP port (docs/kubectl.md): any Kubernetes API path and verb of a connected
 * cluster, for plain requests (HTTP/1.1 and h2) and upgrades (exec, attach, port-forward over WebSocket). Admitted
 * first from the path and headers (kube-admission.ts), before anything reaches an agent and before the body is read;
 * then carried over the account's agent stream on this replica (kube-exchange.ts, kube-upgrade-exchange.ts), or passed
 * to the replica holding one (kube-forward.ts); an audit entry is recorded when it is admitted and another when it
 * ends (kube-audit.ts), and it is counted. Refusals are Kubernetes `Status` answers (kube-status.ts).
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type http2 from 'node:http2';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import { allowedKubeHeaders } from '../../shared/kube-headers.js';
import type { Logger } from '../../shared/logger.js';
import type { LiveSession, SessionRegistry } from '../agents/session-registry.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { GatewayKubeConfig } from '../config/kube-schema.js';
import type { KubeRecorder, KubeVia } from '../metrics/gateway-metrics.js';
import type { PathRule } from '../auth/authorization.js';
import { createKubeAdmission, KUBE_PREFIX, type Admitted } from './kube-admission.js';
import { watchCredential } from './credential-watch.js';
import { type KubeRequestStart, kubeAuditEntry, requestStart } from './kube-audit.js';
import { closeAfterAnswer, hasBody, outcomeOf, runExchange, type ExchangeOutcome, type ExchangeRequest } from './kube-exchange.js';
import type { KubeForwarder } from './kube-forward.js';
import { kubeRequestInfo } from './kube-request-info.js';
import { KubeRefusal, sendSocketStatus, sendStatus } from './kube-status.js';
import { runUpgradeExchange } from './kube-upgrade-exchange.js';

/** Answered when this replica holds no stream for an account a replica forwarded to it (the forwarder forgets it). */
const UNSERVED_HEADER = 'x-outpost-kube-unserved';

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

/**
 * `/k8s` and everything under it require the `kube` role, any method (the endpoint then admits the account itself,
 * from the headers): the rule authorization and the REST app apply to these paths when they reach them.
 */
export const KUBE_PATH_RULE: PathRule = {
  name: 'the Kubernetes API proxy',
  requirement: 'kube',
  matches: (path) => path === '/k8s' || path.startsWith(KUBE_PREFIX),
};

/** True for paths the endpoint serves. */
export function isKubePath(url: string | undefined): boolean {
  return (url ?? '').startsWith(KUBE_PREFIX);
}

/** The session to carry a request for the account: the lease holder while its lease is valid, else one serving it. */
function kubeSessionFor(registry: SessionRegistry, account: string): LiveSession | undefined {
  const lease = registry.leaseOf(account);
  if (lease && lease.validUntil > performance.now() && lease.session.serves(account)) return lease.session;
  return registry.all().find((s) => s.serves(account));
}

/** How one admitted request is carried: over a local stream, to another replica, or answered here. */
interface Carriage {
  local(session: LiveSession): Promise<ExchangeOutcome>;
  forward(baseUrl: string): Promise<ExchangeOutcome>;
  answer(refusal: KubeRefusal): void;
  /** Cuts the caller's connection (its credential ended): the carriage then ends as for a caller that went away. */
  cut(): void;
}

/** Creates the endpoint. */
export function createKubeEndpoint(deps: KubeEndpointDeps): KubeEndpoint {
  const { config, logger } = deps;
  const admit = createKubeAdmission(deps.authenticator, config, (principal, groups, account, method, path, refusal) => {
    const caller = { principal, principalGroups: groups, user: '', groups: [] };
    deps.audit?.record(
      kubeAuditEntry({ account, path, caller }, method, requestStart(), outcomeOf(refusal.status, refusal.message), deps.gatewayId, {
        stage: 'completed',
        requestId: randomUUID(),
      }),
    );
  });

  /** The request for the agent: the checked path as admitted, the caller's headers through the shared allow-list. */
  function exchangeRequest(a: Admitted, req: AnyRequest, timeoutMs: number | undefined, upgrade: boolean): ExchangeRequest {
    return {
      account: a.account,
      method: (req.method ?? 'GET').toUpperCase(),
      path: a.path,
      headers: allowedKubeHeaders(req.headers, upgrade),
      caller: a.caller,
      timeoutMs,
      tellImpersonation: a.forwarded,
    };
  }

  /** Carries an admitted request, then releases its slot, counts it and records it (not a forwarded one: its first replica does). */
  async function carry(admitted: Admitted, method: string, started: KubeRequestStart, carriage: Carriage): Promise<void> {
    let outcome = outcomeOf();
    let via: KubeVia = 'local';
    deps.metrics?.kubeOpened();
    // On record from admission: a watch open for hours, or one whose replica dies, is in the audit log all along.
    const requestId = randomUUID();
    if (!admitted.forwarded) {
      deps.audit?.record(kubeAuditEntry(admitted, method, started, outcome, deps.gatewayId, { stage: 'started', requestId }));
    }
    // A long request ends with its credential (a forwarded one with its first replica's cut).
    let cutBecause = '';
    const credential = admitted.forwarded
      ? undefined
      : watchCredential(admitted.principal, (reason) => {
          cutBecause = reason;
          carriage.cut();
        });
    try {
      const session = kubeSessionFor(deps.registry, admitted.account);
      const target = session || admitted.forwarded ? undefined : await deps.forwarder?.target(admitted.account);
      if (session) {
        outcome = await carriage.local(session);
      } else if (target !== undefined) {
        via = 'forwarded';
        outcome = await carriage.forward(target);
        if (outcome.status === 503) deps.forwarder!.forget(admitted.account);
      } else {
        via = 'unserved';
        const refusal = admitted.forwarded
          ? new KubeRefusal(503, `no agent stream serves account "${admitted.account}" on this replica; retry`, {
              [UNSERVED_HEADER]: '1',
              'retry-after': '1',
            })
          : new KubeRefusal(503, `no agent serves account "${admitted.account}" now`);
        carriage.answer(refusal);
        outcome = outcomeOf(refusal.status, refusal.message);
      }
    } finally {
      credential?.stop();
      admitted.release();
      deps.metrics?.kubeFinished(via, outcome.status);
    }
    if (cutBecause) outcome.error = cutBecause;
    if (!admitted.forwarded) {
      deps.audit?.record(kubeAuditEntry(admitted, method, started, outcome, deps.gatewayId, { stage: 'completed', requestId }));
    }
  }

  return {
    async serve(req, res) {
      const started = requestStart();
      let admitted: Admitted;
      try {
        admitted = await admit(req);
      } catch (err) {
        const refusal = toRefusal(err, logger);
        refuseUnread(req, res, refusal);
        deps.metrics?.kubeFinished('refused', refusal.status);
        return false;
      }
      const method = (req.method ?? 'GET').toUpperCase();
      const info = kubeRequestInfo(method, admitted.path);
      // The caller's own `?timeout=` (kubectl --request-timeout) may shorten the deadline, never lengthen it.
      const limit = config.requestTimeoutSeconds * 1000;
      const timeoutMs = info.longRunning ? undefined : Math.min(limit, info.timeoutMs && info.timeoutMs > 0 ? info.timeoutMs : limit);
      await carry(admitted, method, started, {
        local: (session) => runExchange(session, exchangeRequest(admitted, req, timeoutMs, false), req, res),
        forward: (target) => deps.forwarder!.forward(target, forwardTarget(admitted), admitted.principal, req, res),
        answer: (refusal) => {
          if (hasBody(req) && req.httpVersionMajor !== 2) (res as http.ServerResponse).setHeader('connection', 'close');
          sendStatus(res, refusal);
          if (hasBody(req)) closeAfterAnswer(req, res);
        },
        cut: () => res.destroy(),
      });
      return true;
    },

    async upgrade(req, socket, rest) {
      const started = requestStart();
      socket.on('error', () => {});
      let admitted: Admitted;
      try {
        admitted = await admit(req, String(req.headers.upgrade ?? ''));
      } catch (err) {
        const refusal = toRefusal(err, logger);
        sendSocketStatus(socket, refusal);
        deps.metrics?.kubeFinished('refused', refusal.status);
        return false;
      }
      await carry(admitted, (req.method ?? 'GET').toUpperCase(), started, {
        local: (session) => runUpgradeExchange(session, exchangeRequest(admitted, req, undefined, true), socket, rest),
        forward: (target) => deps.forwarder!.forwardUpgrade(target, forwardTarget(admitted), admitted.principal, req, socket, rest),
        answer: (refusal) => sendSocketStatus(socket, refusal),
        cut: () => socket.destroy(),
      });
      return true;
    },
  };
}

/**
 * The request target a forward sends: the admitted account and checked path, concatenated (never the caller's raw
 * `req.url`, never re-resolved), so the receiving replica checks exactly what this one checked.
 */
function forwardTarget(admitted: Pick<Admitted, 'account' | 'path'>): string {
  return `${KUBE_PREFIX}${encodeURIComponent(admitted.account)}${admitted.path}`;
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
