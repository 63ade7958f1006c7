/**
 * `/k8s/{account}` requests whose account is served by another replica's agent stream (docs/replicas.md): found with
 * the same owner lookup as forwarded operations (the lease holder first), and passed on as HTTP — streamed both ways,
 * upgrades included — authenticated with this replica's token and naming the caller in {@link CALLER_HEADER}, which
 * the receiving replica trusts from replica credentials only. The receiver serves it from its own streams and never
 * forwards again, so forwards cannot loop.
 */
import { HOP_BY_HOP } from '../../shared/hop-by-hop.js';
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import type { ReplicaTokenSigner } from '../auth/replica-token.js';
import type { OwnerLookup } from '../replicas/owner-lookup.js';
import type { ReplicaDirectory } from '../replicas/replica-directory.js';
import type { ExchangeOutcome } from './kube-exchange.js';
import { closeAfterAnswer, IMPERSONATED_HEADER, outcomeOf } from './kube-exchange.js';
import type { KubeCaller } from './kube-identity.js';
import { KubeRefusal, sendSocketStatus, sendStatus } from './kube-status.js';
import { writeRawHead } from './kube-upgrade-exchange.js';

/** Names the caller on a forwarded request: base64url JSON of a {@link KubeCaller}. Trusted from replicas only. */
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
  forward(baseUrl: string, path: string, caller: KubeCaller, req: AnyRequest, res: AnyResponse): Promise<ExchangeOutcome>;
  forwardUpgrade(
    baseUrl: string,
    path: string,
    caller: KubeCaller,
    req: http.IncomingMessage,
    socket: Duplex,
    rest: Buffer,
  ): Promise<ExchangeOutcome>;
  /** Cuts every forward still open (shutdown: their callers reconnect to another replica). */
  close(): void;
}

/** Encodes the caller for {@link CALLER_HEADER}. */
export function encodeCaller(caller: KubeCaller): string {
  return Buffer.from(JSON.stringify(caller)).toString('base64url');
}

/** Decodes {@link CALLER_HEADER}; undefined when it is not a well-formed caller. */
export function decodeCaller(value: string | string[] | undefined): KubeCaller | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const c = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Partial<KubeCaller>;
    const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((g) => typeof g === 'string');
    if (typeof c.principal !== 'string' || typeof c.user !== 'string' || c.user === '' || !strings(c.groups)) return undefined;
    return { principal: c.principal, user: c.user, groups: c.groups };
  } catch {
    return undefined;
  }
}

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

  async function outgoing(req: AnyRequest, caller: KubeCaller, upgrade: boolean): Promise<Record<string, string | string[]>> {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || name.startsWith(':') || name === 'host' || name === 'authorization') continue;
      if (HOP_BY_HOP.has(name) && !(upgrade && (name === 'connection' || name === 'upgrade'))) continue;
      headers[name] = value;
    }
    if (deps.signer) headers.authorization = `Bearer ${await deps.signer.token()}`;
    headers[CALLER_HEADER] = encodeCaller(caller);
    return headers;
  }

  /** Peer requests and their upgraded sockets still open. */
  const openForwards = new Set<{ destroy(): void }>();
  const track = (item: http.ClientRequest | Duplex) => {
    openForwards.add(item);
    item.once('close', () => openForwards.delete(item));
  };

  function open(baseUrl: string, path: string, method: string, headers: Record<string, string | string[]>): http.ClientRequest {
    const url = new URL(path, baseUrl);
    const secure = url.protocol === 'https:';
    // A connection per request: watches and upgrades hold theirs for long, and a pooled one would be taken over.
    const req = (secure ? https : http).request(url, { method, headers, agent: false, ...(secure && ca ? { ca } : {}) });
    track(req);
    return req;
  }

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
      for (const item of [...openForwards]) item.destroy();
      openForwards.clear();
    },
    async forward(baseUrl, path, caller, req, res) {
      const outcome = outcomeOf();
      const peer = open(baseUrl, path, req.method ?? 'GET', await outgoing(req, caller, false));
      return new Promise((resolve) => {
        let done = false;
        const finish = (error = '') => {
          if (done) return;
          done = true;
          outcome.error ||= error;
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
            outcome.status = 502;
            sendStatus(res, new KubeRefusal(502, `could not reach the replica serving the account: ${err.message}`));
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
    async forwardUpgrade(baseUrl, path, caller, req, socket, rest) {
      const outcome = outcomeOf();
      const peer = open(baseUrl, path, req.method ?? 'GET', await outgoing(req, caller, true));
      return new Promise((resolve) => {
        const finish = (error = '') => {
          outcome.error ||= error;
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
          outcome.status ||= 502;
          sendSocketStatus(socket, new KubeRefusal(502, `could not reach the replica serving the account: ${err.message}`));
          finish(err.message);
        });
        peer.end();
      });
    },
  };
}
