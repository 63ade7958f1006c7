/**
 * One proxied Kubernetes API request on the agent (docs/agent-protocol.md, "Kubernetes API requests"): sent to the
 * account's cluster with the agent's credentials and the impersonated identity, its body streamed in as the gateway
 * sends it, its answer streamed back under the gateway's credit — an upgrade (exec, attach, port-forward) carried as
 * raw bytes both ways after the 101. Cancelling destroys the cluster connection, which ends the watch, the log follow
 * or the exec there. Requests on Secrets pass the account's Secret policy (secret-request.ts) on the way out and
 * back.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { KubeRequestHead } from '../../gen/outpost/agent/v1/kube_pb.js';
import { createCreditReceiver, KUBE_WINDOW_BYTES, pumpWithCredit, type CreditPump, type CreditReceiver } from '../../shared/kube-credit.js';
import { kubePathProblem } from '../../shared/kube-path.js';
import { KubeHttpError, type KubeClient } from '../kube/kube-client.js';
import type { AccountConfig } from '../config/schema.js';
import { impersonationFor, outgoingHeaders, responseHeaders, type HeaderInit, type Impersonation } from './proxy-headers.js';
import { SECRET_BUFFER_BYTES } from './secret-answer.js';
import { secretGuard, type SecretGuard } from './secret-request.js';

/** Why a request ended before the cluster answered (KubeResponseEnd.code). */
export type ProxyFailure = 'unavailable' | 'refused' | 'timeout' | 'internal';

/** What a request sends back to the gateway (kube-proxy.ts wraps each in a KubeResponse). */
export interface ProxyReplies {
  head(status: number, headers: HeaderInit[], identity: Impersonation): void;
  body(chunk: Uint8Array): void;
  end(error?: string, code?: ProxyFailure): void;
  window(bytes: number): void;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A running proxied request; see the module comment. */
export class ProxiedRequest {
  private req: ClientRequest | undefined;
  private socket: Duplex | undefined;
  private pump: CreditPump | undefined;
  private readonly receiver: CreditReceiver;
  /** Body bytes the gateway sent before the cluster request existed. */
  private readonly queued: Buffer[] = [];
  private bodyEnded = false;
  private finished = false;
  private answered = false;
  private responseEnded = false;
  private identity: Impersonation = { user: '', groups: [] };
  private guard: SecretGuard | undefined;
  /** The body is held (credited as it arrives, bounded) until it is complete and the guard checked it. */
  private holding = false;
  private heldBytes = 0;
  private bodyComplete: (() => void) | undefined;

  constructor(
    private readonly head: KubeRequestHead,
    private readonly replies: ProxyReplies,
    private readonly log: Logger,
    private readonly onDone: () => void,
  ) {
    this.receiver = createCreditReceiver(KUBE_WINDOW_BYTES, (bytes) => replies.window(bytes));
  }

  /** Checks the request and sends it to the cluster; refusals and failures are answered, never thrown. */
  async start(config: AccountConfig, client: KubeClient | undefined): Promise<void> {
    const { head } = this;
    if (!config.kubeProxy.enabled) {
      return this.fail(`the Kubernetes API proxy is disabled for account "${config.name}" on this agent`, 'refused');
    }
    if (!client) return this.fail(`account "${config.name}" has no usable cluster connection on this agent`, 'unavailable');
    if (!METHODS.has(head.method)) return this.fail(`method "${head.method.slice(0, 20)}" is not proxied`, 'refused');
    const problem = kubePathProblem(head.path);
    if (problem) return this.fail(problem, 'refused');
    try {
      this.identity = impersonationFor(config, head.caller);
    } catch (err) {
      return this.fail((err as Error).message, 'refused');
    }
    const guard = (this.guard = secretGuard(config, head));
    if (guard.refusal) return this.fail(guard.refusal, 'refused');
    // Credit for the request body at once: the gateway may stream it while the connection to the cluster opens. A
    // head without a body is the whole request.
    if (head.noBody) this.bodyEnded = true;
    else if (!head.upgrade) this.replies.window(KUBE_WINDOW_BYTES);
    if (guard.holdsBody) {
      if (!this.bodyEnded) {
        this.holding = true;
        await new Promise<void>((resolve) => (this.bodyComplete = resolve));
        if (this.finished) return;
      }
      const problem = guard.checkBody(Buffer.concat(this.queued));
      if (problem) return this.fail(problem, 'refused');
    }
    let target: Awaited<ReturnType<KubeClient['rawRequest']>>;
    try {
      // The server URL (its path prefix kept) plus the checked path, appended as text: never re-resolved.
      target = await client.rawRequest(head.method, head.path, head.upgrade);
    } catch (err) {
      if (err instanceof KubeHttpError && err.status === 400) return this.fail(err.statusMessage, 'refused');
      return this.fail(`could not prepare the cluster request: ${(err as Error).message}`, 'internal');
    }
    if (this.finished) return;
    const headers = outgoingHeaders(head.headers, target.options.headers, this.identity, head.upgrade);
    guard.rewriteHeaders(headers);
    let req: ClientRequest;
    try {
      req = target.request({ ...target.options, method: head.method, headers });
    } catch (err) {
      // Node refuses header names or values that are not valid HTTP (ERR_INVALID_CHAR…) synchronously.
      return this.fail(`the request cannot be sent: ${(err as Error).message}`, 'refused');
    }
    this.req = req;
    req.on('response', (res) => this.respond(res));
    req.on('upgrade', (res, socket, rest) => this.upgraded(res, socket, rest));
    req.on('error', (err) => this.fail(`${target.url.host}: ${err.message}`, 'unavailable'));
    if (head.upgrade) {
      req.end();
      return;
    }
    // A held body was credited as it arrived.
    for (const chunk of this.queued.splice(0)) {
      if (this.holding) req.write(chunk);
      else this.writeToCluster(chunk);
    }
    if (this.bodyEnded) req.end();
  }

  /** A body chunk from the gateway. */
  body(chunk: Uint8Array): void {
    if (this.finished) return;
    if (!this.receiver.received(chunk.length)) {
      return this.fail('the gateway sent more body bytes than granted', 'internal');
    }
    const buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    if (this.socket) this.socket.write(buffer, () => this.receiver.delivered(buffer.length));
    else if (this.req) this.writeToCluster(buffer);
    else {
      this.queued.push(buffer);
      if (!this.holding) return;
      this.heldBytes += buffer.length;
      if (this.heldBytes > SECRET_BUFFER_BYTES) {
        return this.fail(`the request body is larger than ${SECRET_BUFFER_BYTES} bytes, more than the agent holds to check it`, 'refused');
      }
      this.receiver.delivered(buffer.length);
    }
  }

  /** The gateway's side of the body is complete. */
  endBody(): void {
    if (this.finished || this.bodyEnded) return;
    this.bodyEnded = true;
    if (this.socket) this.socket.end();
    else if (this.req && !this.head.upgrade) this.req.end();
    this.bodyComplete?.();
  }

  /** The gateway granted more response credit. */
  grant(bytes: number): void {
    this.pump?.grant(bytes);
  }

  /** Aborts the request in the cluster; nothing more is sent for it. */
  cancel(reason: string): void {
    if (this.finished) return;
    this.log.debug({ reason }, 'Kubernetes API request cancelled');
    this.finish();
  }

  private writeToCluster(chunk: Buffer): void {
    this.req!.write(chunk, () => this.receiver.delivered(chunk.length));
  }

  private respond(res: IncomingMessage): void {
    if (this.finished) return void res.destroy();
    const answer = this.guard!.answer(res);
    if ('refusal' in answer) {
      res.destroy();
      return this.fail(answer.refusal, answer.code);
    }
    this.answered = true;
    const headers = responseHeaders(res.rawHeaders, false);
    this.replies.head(
      res.statusCode ?? 502,
      answer.rewritten ? headers.filter((h) => h.name !== 'content-length') : headers,
      this.identity,
    );
    this.pump = pumpWithCredit(answer.body, this.head.window || KUBE_WINDOW_BYTES, {
      send: (chunk) => this.replies.body(chunk),
      end: () => this.complete(),
      fail: (err) => {
        if (answer.rewritten) this.log.warn({ err: err.message }, 'the answer to a request on Secrets was cut or broke off');
        this.fail(`the cluster's answer broke off: ${err.message}`, 'unavailable');
      },
    });
  }

  private upgraded(res: IncomingMessage, socket: Duplex, rest: Buffer): void {
    if (this.finished) return void socket.destroy();
    this.answered = true;
    this.socket = socket;
    socket.on('error', () => {});
    this.replies.head(res.statusCode ?? 101, responseHeaders(res.rawHeaders, true), this.identity);
    if (rest.length > 0) socket.unshift(rest);
    this.pump = pumpWithCredit(socket, this.head.window || KUBE_WINDOW_BYTES, {
      send: (chunk) => this.replies.body(chunk),
      end: () => this.complete(),
      fail: () => this.complete(),
    });
    // The gateway may send from now on.
    this.replies.window(KUBE_WINDOW_BYTES);
  }

  /** The cluster's side ended cleanly. */
  private complete(): void {
    if (this.finished || this.responseEnded) return;
    this.responseEnded = true;
    this.replies.end();
    this.finish();
  }

  private fail(message: string, code: ProxyFailure): void {
    if (this.finished) return;
    if (!this.answered) this.log.info({ code, err: message }, 'Kubernetes API request failed before an answer');
    this.replies.end(message, code);
    this.finish();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.pump?.stop();
    this.req?.destroy();
    this.socket?.destroy();
    this.queued.length = 0;
    this.bodyComplete?.();
    this.onDone();
  }
}
