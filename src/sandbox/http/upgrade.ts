/**
 * HTTP/1.1 upgrades: `pods/exec` and `pods/attach` over the channel WebSocket protocols and `pods/portforward` as
 * SPDY/3.1 tunnelled in a WebSocket (`SPDY/3.1+portforward.k8s.io`, what kubectl 1.31+ uses). Before anything is
 * accepted the request goes through the same steps as every request — authentication, impersonation, the fault gate
 * and RBAC (a GET upgrade also needs `create`, as kube-apiserver 1.33 checks) — then the pod checks. Plain SPDY
 * upgrades (kubectl ≤ 1.29, and the fallback of newer ones) are refused with a 400 Status saying so. Upgrade requests
 * to any other path are served as ordinary requests.
 */
import { type IncomingMessage, type ServerResponse, STATUS_CODES, ServerResponse as Response } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { ApiError, errors } from '../errors.js';
import { attachProgram, execProgram } from '../exec/builtins.js';
import { CHANNEL_PROTOCOLS, runChannelSession } from '../exec/channel-session.js';
import { runTunneledPortForward } from '../port-forward/spdy-port-forward.js';
import { accessAttributes, authorizeOrThrow, resolveUser } from './access.js';
import { parseRequestInfo } from './request-info.js';
import type { RouterContext } from './router.js';
import { checkPortForward, scheduledPod, streamOptions, streamTarget } from './stream-target.js';

/** The subprotocol of SPDY port-forward tunnelled over WebSocket. */
const TUNNELED_PORT_FORWARD = 'SPDY/3.1+portforward.k8s.io';

const STREAMING = new Set(['exec', 'attach', 'portforward']);
const SPDY_REFUSAL =
  'the sandbox supports exec, attach and port-forward over WebSocket only (kubectl 1.30+; port-forward 1.31+); SPDY is not supported';

/** The `upgrade` listener plus a way to end every upgraded connection on shutdown. */
export interface UpgradeHandler {
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  closeAll(): void;
}

function reject(socket: Duplex, err: unknown): void {
  const apiError = err instanceof ApiError ? err : errors.internal((err as Error)?.message ?? String(err));
  const body = JSON.stringify(apiError.toStatus());
  if (!socket.writable) return void socket.destroy();
  socket.end(
    `HTTP/1.1 ${apiError.code} ${STATUS_CODES[apiError.code] ?? 'Error'}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-cache, private\r\nConnection: close\r\n\r\n${body}`,
  );
}

function offeredProtocols(req: IncomingMessage): string[] {
  const header = req.headers['sec-websocket-protocol'] ?? '';
  return header
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/** Creates the upgrade handler; `plain` serves upgrade requests that are not exec/attach/port-forward. */
export function createUpgradeHandler(ctx: RouterContext, plain: (req: IncomingMessage, res: ServerResponse) => void): UpgradeHandler {
  const chosen = new WeakMap<IncomingMessage, string>();
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 16 * 1024 * 1024,
    handleProtocols: (_offered, req) => chosen.get(req) ?? false,
  });
  const open = new Set<WebSocket>();
  // ws refuses subprotocols that are not RFC 7230 tokens, and `SPDY/3.1+portforward.k8s.io` has a '/': such a
  // protocol is taken off the request before the handshake and written into the 101 response here instead.
  const untokened = new WeakMap<IncomingMessage, string>();
  wss.on('headers', (headers: string[], req: IncomingMessage) => {
    const protocol = untokened.get(req);
    if (protocol) headers.push(`Sec-WebSocket-Protocol: ${protocol}`);
  });

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const method = req.method ?? 'GET';
    const ri = parseRequestInfo(method, url.pathname, false);
    if (!ri.resourceRequest || ri.group !== '' || ri.resource !== 'pods' || !STREAMING.has(ri.subresource ?? '')) {
      const res = new Response(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket as never);
      res.on('finish', () => socket.end());
      return plain(req, res);
    }
    const user = resolveUser(ctx.authenticator, ctx.authorizer, req);
    await ctx.faults.gate(false);
    authorizeOrThrow(ctx.authorizer, user, ri);
    if (method === 'GET') authorizeOrThrow(ctx.authorizer, user, ri, accessAttributes(ri, 'create'));
    if (method !== 'GET' && method !== 'POST') throw errors.methodNotAllowed();
    const info = ctx.store.registry.byResource('', 'v1', 'pods');
    if (!info || ri.namespace === undefined || ri.name === undefined) throw errors.resourceNotFound();
    const pod = scheduledPod(ctx.store, info, ri.namespace, ri.name);
    const query = url.searchParams;
    const sub = ri.subresource!;
    const target = sub === 'portforward' ? undefined : streamTarget(pod, query);
    const options = sub === 'portforward' ? undefined : streamOptions(query);
    const command = query.getAll('command');
    if (sub === 'exec' && command.length === 0) throw errors.badRequest('you must specify at least one command for the container');
    if (sub === 'portforward') checkPortForward(pod, query);

    const upgradeTo = (req.headers.upgrade ?? '').toLowerCase();
    if (!upgradeTo.split(',').some((p) => p.trim() === 'websocket')) {
      if (upgradeTo.includes('spdy')) throw errors.badRequest(SPDY_REFUSAL);
      throw errors.badRequest(`unsupported upgrade "${req.headers.upgrade ?? ''}"; the sandbox upgrades to websocket only`);
    }
    const offered = offeredProtocols(req);
    const wanted: readonly string[] = sub === 'portforward' ? [TUNNELED_PORT_FORWARD] : CHANNEL_PROTOCOLS;
    const protocol = wanted.find((p) => offered.includes(p));
    if (!protocol) {
      throw errors.badRequest(
        sub === 'portforward'
          ? `the sandbox serves port-forward only as SPDY/3.1 tunnelled over WebSocket (subprotocol ${TUNNELED_PORT_FORWARD}, kubectl 1.31+); offered: [${offered.join(', ')}]`
          : `the sandbox serves ${sub} over WebSocket with subprotocol ${CHANNEL_PROTOCOLS.join(' or ')}; offered: [${offered.join(', ')}]`,
      );
    }
    if (/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(protocol)) chosen.set(req, protocol);
    else {
      untokened.set(req, protocol);
      delete req.headers['sec-websocket-protocol'];
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      open.add(ws);
      ws.on('close', () => open.delete(ws));
      if (sub === 'portforward') void runTunneledPortForward(ws, pod);
      else if (sub === 'exec') void runChannelSession(ws, options!, execProgram(command, pod, target!.container), command);
      else void runChannelSession(ws, options!, attachProgram(pod, target!.container), []);
    });
  }

  return {
    handle(req, socket, head) {
      socket.on('error', () => socket.destroy());
      upgrade(req, socket, head).catch((err: unknown) => {
        if (!(err instanceof ApiError) || err.code >= 500) ctx.logger.warn({ err, url: req.url }, 'sandbox upgrade failed');
        reject(socket, err);
      });
    },
    closeAll() {
      for (const ws of open) ws.terminate();
      open.clear();
      wss.close();
    },
  };
}
