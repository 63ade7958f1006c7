/**
 * `/k8s/{account}` requests whose account is served by another replica's agent stream (docs/replicas.md): found with
 * the same owner lookup as forwarded operations (the lease holder first), and passed on as HTTP — streamed both ways,
 * upgrades included — authenticated with this replica's token and describing the caller's principal in
 * {@link CALLER_HEADER}, which the receiving replica trusts from replica credentials only and admits again with its
 * own rules (kube-admission.ts). The target is the checked account and path appended to the peer's base URL as text,
 * never re-resolved; the caller's headers go on through the shared allow-list (src/shared/kube-headers.ts). The
 * receiver serves it from its own streams and never forwards again, so forwards cannot loop. At shutdown every open
 * forward is cut first and new ones are refused (503), so the servers' grace is not spent waiting on watches.
 */
import { HOP_BY_HOP } from '../../shared/hop-by-hop.js';
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { urlToHttpOptions } from 'node:url';
import { allowedKubeHeaders } from '../../shared/kube-headers.js';
import type { Principal } from '../auth/principal.js';
import type { ReplicaTokenSigner } from '../auth/replica-token.js';
import { describePrincipal, encodeDescription } from '../auth/vouched-principal.js';
import type { OwnerLookup } from '../replicas/owner-lookup.js';
import type { ReplicaDirectory } from '../replicas/replica-directory.js';
import type { ExchangeOutcome } from './kube-exchange.js';
import { closeAfterAnswer, IMPERSONATED_HEADER, outcomeOf } from './kube-exchange.js';
import { KubeRefusal, sendSocketStatus, sendStatus } from './kube-status.js';
import { writeRawHead } from './kube-upgrade-exchange.js';

/**
 * Describes the caller on a forwarded request: base64url JSON of its principal's description (vouched-principal.ts:
 * method, subject, groups, certificate attributes — never roles). Trusted from replica credentials only.
 */
export const CALLER_HEADER = 'x-outpost-kube-caller';

type AnyRequest = http.IncomingMessage | import('node:http2').Http2ServerRequest;
type AnyResponse = http.ServerResponse | import('node:http2').Http2ServerResponse;

/** What {@link createKubeForwarder} needs. */
export interface KubeForwarderDeps {
  owners: OwnerLookup;
  replicas: Pick<ReplicaDirectory, 'get'>;
  /** Signs this replica's token; none in insecure mode. */
  signer?: ReplicaTokenSigner;
  caFile?: string;
}

/** See the module comment. */
export interface KubeForwarder {
  /** The base URL of a ready replica whose agent stream serves the account, best first; undefined when none. */
  target(account: string): Promise<string | undefined>;
  /** Forgets what the lookup cached for the account (its answer was wrong). */
  forget(account: string): void;
  /**
   * Passes a request on. `target` is the request target to send (`/k8s/{account}{path}`), built from the admitted
   * account and checked path by concatenation; `caller` the admitted principal.
   */
  forward(baseUrl: string, target: string, caller: Principal, req: AnyRequest, res: AnyResponse): Promise<ExchangeOutcome>;
  /** As {@link KubeForwarder.forward}, for an upgrade. */
  forwardUpgrade(
    baseUrl: string,
    target: string,
    caller: Principal,
    req: http.IncomingMessage,
    socket: Duplex,
    rest: Buffer,
  ): Promise<ExchangeOutcome>;
  /** Cuts every forward still open and refuses new ones (shutdown: their callers reconnect to another replica). */
  close(): void;
}

/** Why a forward ended when this replica cut it at shutdown (the audit log's error). */
const SHUTDOWN_MESSAGE = 'this replica is shutting down: the forwarded request was cut (retry: another replica serves it)';

function impersonatedOf(headers: http.IncomingHttpHeaders, outcome: ExchangeOutcome): void {
  const value = headers[IMPERSONATED_HEADER];
  if (typeof value !== 'string') return;
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as { user?: string; groups?: string[] };
    outcome.impersonatedUser = typeof parsed.user === 'string' ? parsed.user : '';
    outcome.impersonatedGroups = Array.isArray(parsed.groups) ? parsed.groups.filter((g) => typeof g === 'string') : [];
  } catch {
    // not ours: leave it empty
  }
}

/** Creates the forwarder; reads `caFile` now. */
export function createKubeForwarder(deps: KubeForwarderDeps): KubeForwarder {
  const ca = deps.caFile ? readFileSync(deps.caFile) : undefined;

  let closed = false;

  /** The caller's allowed headers, this replica's credentials, the caller's description (and an upgrade's pair). */
  async function outgoing(req: AnyRequest, caller: Principal, upgrade: boolean): Promise<Record<string, string | string[]>> {
    const headers: Record<string, string | string[]> = {};
    for (const { name, value } of allowedKubeHeaders(req.headers, upgrade)) {
      const existing = headers[name];
      headers[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    }
    if (upgrade) headers.connection = 'Upgrade';
    if (deps.signer) headers.authorization = `Bearer ${await deps.signer.token()}`;
    headers[CALLER_HEADER] = encodeDescription(describePrincipal(caller));
    return headers;
  }

  /** Peer requests and their upgraded sockets still open. */
  const openForwards = new Set<{ destroy(error?: Error): void }>();
  const track = (item: http.ClientRequest | Duplex) => {
    openForwards.add(item);
    item.once('close', () => openForwards.delete(item));
  };

  function open(baseUrl: string, target: string, method: string, headers: Record<string, string | string[]>): http.ClientRequest {
    const base = new URL(baseUrl);
    const { protocol, hostname, port } = urlToHttpOptions(base);
    const secure = protocol === 'https:';
    // The checked target appended to the peer's base path as text: sent as it was admitted, never re-resolved.
    const path = base.pathname.replace(/\/+$/, '') + target;
    // A connection per request: watches and upgrades hold theirs for long, and a pooled one would be taken over.
    const req = (secure ? https : http).request({
      protocol,
      hostname,
      port,
      path,
      method,
      headers,
      agent: false,
      ...(secure && ca ? { ca } : {}),
    });
    track(req);
    return req;
  }

  const shuttingDown = () => new KubeRefusal(503, 'this replica is shutting down; retry', { 'retry-after': '1' });

  return {
    async target(account) {
      for (const id of await deps.owners.replicasFor(account)) {
        const replica = deps.replicas.get(id);
        if (replica?.ready) return replica.baseUrl;
      }
      return undefined;
    },
    forget: (account) => deps.owners.forget(account),
    close() {
      closed = true;
      for (const item of [...openForwards]) item.destroy(new Error(SHUTDOWN_MESSAGE));
      openForwards.clear();
    },
    async forward(baseUrl, target, caller, req, res) {
      const headers = await outgoing(req, caller, false);
      if (closed) {
        const refusal = shuttingDown();
        sendStatus(res, refusal);
        closeAfterAnswer(req, res);
        return outcomeOf(refusal.status, refusal.message);
      }
      const outcome = outcomeOf();
      const peer = open(baseUrl, target, req.method ?? 'GET', headers);
      return new Promise((resolve) => {
        let done = false;
        const finish = (error = '') => {
          if (done) return;
          done = true;
          outcome.error ||= closed ? SHUTDOWN_MESSAGE : error;
          // Answered before the caller's body was all passed on: the rest must not become the next request.
          if (!(req as http.IncomingMessage).readableEnded) closeAfterAnswer(req, res);
          resolve(outcome);
        };
        peer.on('response', (answer) => {
          outcome.status = answer.statusCode ?? 502;
          impersonatedOf(answer.headers, outcome);
          const headers: Record<string, string | string[]> = {};
          for (const [name, value] of Object.entries(answer.headers)) {
            if (value !== undefined && !HOP_BY_HOP.has(name) && name !== IMPERSONATED_HEADER) headers[name] = value;
          }
          (res as http.ServerResponse).writeHead(outcome.status, headers);
          (res as http.ServerResponse).flushHeaders();
          answer.on('data', (chunk: Buffer) => (outcome.bytesOut += chunk.length));
          answer.pipe(res as http.ServerResponse);
          answer.on('end', () => finish());
          answer.on('error', (err) => {
            res.destroy();
            finish(err.message);
          });
        });
        peer.on('error', (err) => {
          if (!res.headersSent) {
            const refusal = closed
              ? shuttingDown()
              : new KubeRefusal(502, `could not reach the replica serving the account: ${err.message}`);
            outcome.status = refusal.status;
            sendStatus(res, refusal);
          } else res.destroy();
          finish(err.message);
        });
        // Closed before the peer's answer ended: the caller went away (the peer cancels it in the cluster).
        res.once('close', () => {
          if (done) return;
          peer.destroy();
          finish('the caller went away');
        });
        (req as http.IncomingMessage).on('data', (chunk: Buffer) => (outcome.bytesIn += chunk.length));
        (req as http.IncomingMessage).pipe(peer);
      });
    },
    async forwardUpgrade(baseUrl, target, caller, req, socket, rest) {
      const headers = await outgoing(req, caller, true);
      if (closed) {
        const refusal = shuttingDown();
        sendSocketStatus(socket, refusal);
        return outcomeOf(refusal.status, refusal.message);
      }
      const outcome = outcomeOf();
      const peer = open(baseUrl, target, req.method ?? 'GET', headers);
      return new Promise((resolve) => {
        const finish = (error = '') => {
          outcome.error ||= closed ? SHUTDOWN_MESSAGE : error;
          resolve(outcome);
        };
        socket.on('error', () => {});
        peer.on('upgrade', (answer, peerSocket, peerRest) => {
          outcome.status = 101;
          impersonatedOf(answer.headers, outcome);
          const headers: Record<string, string | string[]> = {};
          for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) {
            const name = answer.rawHeaders[i]!.toLowerCase();
            if (name !== IMPERSONATED_HEADER) headers[name] = answer.rawHeaders[i + 1]!;
          }
          writeRawHead(socket, 101, 'Switching Protocols', headers);
          peerSocket.on('error', () => {});
          track(peerSocket);
          track(socket);
          if (peerRest.length > 0) socket.write(peerRest);
          if (rest.length > 0) peerSocket.write(rest);
          socket.on('data', (chunk: Buffer) => (outcome.bytesIn += chunk.length));
          peerSocket.on('data', (chunk: Buffer) => (outcome.bytesOut += chunk.length));
          socket.pipe(peerSocket).pipe(socket);
          let closed = 0;
          const closeBoth = () => {
            socket.destroy();
            peerSocket.destroy();
            if (++closed === 1) finish();
          };
          socket.once('close', closeBoth);
          peerSocket.once('close', closeBoth);
        });
        peer.on('response', (answer) => {
          outcome.status = answer.statusCode ?? 502;
          impersonatedOf(answer.headers, outcome);
          const headers: Record<string, string | string[]> = {};
          for (const [name, value] of Object.entries(answer.headers)) {
            if (value !== undefined && !HOP_BY_HOP.has(name) && name !== IMPERSONATED_HEADER && name !== 'content-length')
              headers[name] = value;
          }
          headers.connection = 'close';
          writeRawHead(socket, outcome.status, http.STATUS_CODES[outcome.status] ?? 'Unknown', headers);
          answer.pipe(socket);
          answer.on('end', () => finish());
          answer.on('error', (err) => finish(err.message));
        });
        peer.on('error', (err) => {
          const refusal = closed ? shuttingDown() : new KubeRefusal(502, `could not reach the replica serving the account: ${err.message}`);
          outcome.status ||= refusal.status;
          sendSocketStatus(socket, refusal);
          finish(err.message);
        });
        peer.end();
      });
    },
  };
}
