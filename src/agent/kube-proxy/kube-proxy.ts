/**
 * The agent's side of the Kubernetes API proxy on one session (docs/kubectl.md): routes the gateway's KubeRequest
 * parts to their requests by id (proxied-request.ts), wraps what each request answers in KubeResponse messages, bounds
 * how many run at once, and aborts them all when the session ends (the gateway has already answered their callers).
 */
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import type { Logger } from 'pino';
import { KubeResponseSchema, type KubeRequest, type KubeResponse } from '../../gen/outpost/agent/v1/kube_pb.js';
import type { AccountRuntime } from '../accounts/account-runtime.js';
import { ProxiedRequest, type ProxyReplies } from './proxied-request.js';

/** Requests one session runs at once; more are refused (the gateway's limits should keep callers well below it). */
const MAX_PROXIED_REQUESTS = 512;

/** What {@link createKubeProxy} needs. */
export interface KubeProxyOptions {
  /** The account the agent serves under that name now, if any. */
  account(name: string): AccountRuntime | undefined;
  /** Writes one message on the session's stream. */
  send(response: KubeResponse): void;
  logger: Logger;
  maxRequests?: number;
}

/** See the module comment. */
export interface KubeProxy {
  /** Handles one KubeRequest part from the gateway. */
  received(request: KubeRequest): void;
  /** Aborts every running request (the session ended). */
  close(reason: string): void;
  /** Requests running now. */
  active(): number;
}

/** Creates the proxy of one session. */
export function createKubeProxy(options: KubeProxyOptions): KubeProxy {
  const running = new Map<bigint, ProxiedRequest>();
  const max = options.maxRequests ?? MAX_PROXIED_REQUESTS;
  let closed = false;

  function repliesFor(id: bigint): ProxyReplies {
    const send = (part: MessageInitShape<typeof KubeResponseSchema>['part']) => {
      if (!closed) options.send(create(KubeResponseSchema, { id, part }));
    };
    return {
      head: (status, headers, identity) =>
        send({
          case: 'head',
          value: { status, headers, impersonatedUser: identity.user, impersonatedGroups: identity.groups },
        }),
      body: (chunk) => send({ case: 'body', value: chunk }),
      end: (error = '', code = 'internal') => send({ case: 'end', value: { error, code: error ? code : '' } }),
      window: (bytes) => send({ case: 'window', value: { bytes } }),
    };
  }

  function start(id: bigint, request: KubeRequest): void {
    if (request.part.case !== 'head') return;
    const head = request.part.value;
    const log = options.logger.child({ kubeRequest: Number(id), account: head.account, method: head.method });
    const replies = repliesFor(id);
    if (running.size >= max) {
      replies.end(`this agent already runs ${max} Kubernetes API requests on the stream`, 'refused');
      return;
    }
    const proxied = new ProxiedRequest(head, replies, log, () => {
      if (running.get(id) === proxied) running.delete(id);
    });
    running.set(id, proxied);
    const account = options.account(head.account);
    if (!account) {
      replies.end(`account "${head.account.slice(0, 253)}" is not served by this agent`, 'refused');
      running.delete(id);
      return;
    }
    log.debug({ path: head.path.split('?')[0], upgrade: head.upgrade }, 'Kubernetes API request');
    void proxied.start(account.prepared.config, account.prepared.client);
  }

  return {
    received(request) {
      if (closed) return;
      const { id } = request;
      const existing = running.get(id);
      switch (request.part.case) {
        case 'head':
          if (existing) {
            existing.cancel('a second head for a running request');
            options.logger.warn({ kubeRequest: Number(id) }, 'the gateway reused a running Kubernetes request id; cancelled it');
            return;
          }
          return start(id, request);
        case 'body':
          return existing?.body(request.part.value);
        case 'end':
          return existing?.endBody();
        case 'window':
          return existing?.grant(request.part.value.bytes);
        case 'cancel':
          return existing?.cancel(request.part.value.reason || 'cancelled by the gateway');
        default:
          return;
      }
    },
    close(reason) {
      if (closed) return;
      for (const request of [...running.values()]) request.cancel(reason);
      closed = true;
      running.clear();
    },
    active: () => running.size,
  };
}
