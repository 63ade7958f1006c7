/**
 * One `/k8s/{account}` request carried over a local agent stream (kube-mux.ts): the caller's body goes to the agent
 * under the agent's credit, the cluster's answer comes back under ours and is written to the caller as it arrives
 * (a watch or `logs -f` streams), the caller going away cancels it in the cluster, and a request that is not
 * long-running is cancelled and answered 504 at its deadline.
 */
import { HOP_BY_HOP } from '../../shared/hop-by-hop.js';
import http from 'node:http';
import type http2 from 'node:http2';
import type { KubeResponseHead } from '../../gen/outpost/agent/v1/kube_pb.js';
import { createCreditReceiver, KUBE_WINDOW_BYTES, pumpWithCredit, type CreditPump } from '../../shared/kube-credit.js';
import type { LiveSession } from '../agents/session-registry.js';
import type { KubeCaller } from './kube-identity.js';
import type { KubeChannel, KubeRequestPart } from '../agents/kube-mux.js';
import { KubeRefusal, sendStatus } from './kube-status.js';

type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;
type AnyResponse = http.ServerResponse | http2.Http2ServerResponse;

/** What a finished exchange reports (for the audit log). */
export interface ExchangeOutcome {
  /** HTTP status answered; 0 when the caller left before any answer. */
  status: number;
  bytesIn: number;
  bytesOut: number;
  impersonatedUser: string;
  impersonatedGroups: string[];
  /** Why it ended abnormally; '' when it did not. */
  error: string;
}

/** The request as sent to the agent. */
export interface ExchangeRequest {
  account: string;
  method: string;
  /** Path and query below the cluster's API root. */
  path: string;
  headers: Array<{ name: string; value: string }>;
  caller: KubeCaller;
  /** Deadline for a request that is not long-running; none when undefined. */
  timeoutMs?: number;
  /** Name the impersonated identity in a response header (answers to a replica that forwarded the request). */
  tellImpersonation?: boolean;
}

/** An outcome with nothing carried yet: `status` answered (0: none yet), `error` why it ended ('' when it did not). */
export function outcomeOf(status = 0, error = ''): ExchangeOutcome {
  return { status, bytesIn: 0, bytesOut: 0, impersonatedUser: '', impersonatedGroups: [], error };
}

/** The head part that starts `request` on the agent stream. */
export function headPart(request: ExchangeRequest, upgrade: boolean, noBody: boolean): KubeRequestPart {
  const { account, method, path, headers, caller } = request;
  return { case: 'head', value: { account, method, path, headers, caller, upgrade, window: KUBE_WINDOW_BYTES, noBody } };
}

/** The header naming the impersonated identity on answers to forwarded requests (kube-forward.ts reads it). */
export const IMPERSONATED_HEADER = 'x-outpost-kube-impersonated';

/** The value of {@link IMPERSONATED_HEADER}. */
export function impersonationHeader(head: KubeResponseHead): string {
  return Buffer.from(JSON.stringify({ user: head.impersonatedUser, groups: head.impersonatedGroups })).toString('base64url');
}

/** Maps an agent's end code to the status the gateway answers when no head came. */
export function refusalForEnd(error: string, code: string): KubeRefusal {
  const status = code === 'unavailable' ? 503 : code === 'timeout' ? 504 : code === 'refused' ? 403 : 502;
  return new KubeRefusal(status, error || 'the agent ended the request without an answer');
}

/** Groups the agent's headers for `writeHead` (repeated names become arrays), leaving out hop-by-hop ones. */
export function headersForCaller(head: KubeResponseHead, keep: (name: string) => boolean = () => true): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const { name, value } of head.headers) {
    if (HOP_BY_HOP.has(name) || !keep(name)) continue;
    // An agent is trusted with its own cluster's answers, not with the caller's connection: a header that is not a
    // valid HTTP header (a CR/LF would split the response) is dropped.
    try {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
    } catch {
      continue;
    }
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else out[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return out;
}

/**
 * Whether a request has a body: HTTP/1.1 says so with `content-length` (not 0) or `transfer-encoding`; on HTTP/2 the
 * HEADERS frame ends the stream when none follows.
 */
export function hasBody(req: AnyRequest): boolean {
  if (req.httpVersionMajor === 2) return !(req as http2.Http2ServerRequest).stream.endAfterHeaders;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Ends an HTTP/1.1 connection once its answer is out (HTTP/2 streams end on their own). */
export function closeAfterAnswer(req: AnyRequest, res: AnyResponse): void {
  if (req.httpVersionMajor === 2) return;
  const socket = req.socket;
  const close = () => {
    socket.end();
    setTimeout(() => socket.destroy(), 2000).unref();
  };
  if (res.writableFinished || res.destroyed) close();
  else res.once('finish', close);
}

/** Runs the exchange on `session`; resolves when the caller's response is finished or abandoned. Never rejects. */
export function runExchange(session: LiveSession, request: ExchangeRequest, req: AnyRequest, res: AnyResponse): Promise<ExchangeOutcome> {
  return new Promise((resolve) => {
    const outcome = outcomeOf();
    let headSeen = false;
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    let pump: CreditPump | undefined;
    let bodyRead = !hasBody(req);
    const receiver = createCreditReceiver(KUBE_WINDOW_BYTES, (bytes) => send({ case: 'window', value: { bytes } }));
    const send = (part: KubeRequestPart) => channel?.send(part) ?? false;

    const finish = (error = '') => {
      if (done) return;
      done = true;
      if (error && !outcome.error) outcome.error = error;
      clearTimeout(timer);
      pump?.stop();
      channel?.close();
      // Answered before the caller's body was read (a refusal, an early answer of the cluster): on HTTP/1.1 the rest of
      // it would be parsed as the next request, so the connection ends once the answer is out.
      if (!bodyRead) closeAfterAnswer(req, res);
      resolve(outcome);
    };
    /** Ends the exchange on our side: the agent cancels the request in the cluster. */
    const cancel = (reason: string) => {
      if (done) return;
      send({ case: 'cancel', value: { reason } });
      finish(reason);
    };
    /** Before an answer's headers: an HTTP/1.1 answer that comes before the body was read says the connection closes. */
    const closingIfUnread = () => {
      if (!bodyRead && req.httpVersionMajor !== 2 && !res.headersSent) (res as http.ServerResponse).setHeader('connection', 'close');
    };
    const refuse = (refusal: KubeRefusal) => {
      if (!res.headersSent) outcome.status = refusal.status;
      closingIfUnread();
      sendStatus(res, refusal);
    };

    const channel: KubeChannel | undefined = session.openKube({
      head(head) {
        if (done || headSeen) return;
        headSeen = true;
        outcome.status = head.status;
        outcome.impersonatedUser = head.impersonatedUser;
        outcome.impersonatedGroups = [...head.impersonatedGroups];
        const headers = headersForCaller(head);
        if (request.tellImpersonation) headers[IMPERSONATED_HEADER] = impersonationHeader(head);
        closingIfUnread();
        (res as http.ServerResponse).writeHead(head.status, headers);
        // A watch's answer must reach the caller before its first event.
        (res as http.ServerResponse).flushHeaders();
      },
      body(chunk) {
        if (done) return;
        if (!receiver.received(chunk.length)) {
          res.destroy();
          return cancel('the agent sent more body bytes than granted');
        }
        outcome.bytesOut += chunk.length;
        (res as http.ServerResponse).write(chunk, () => receiver.delivered(chunk.length));
      },
      window(bytes) {
        pump?.grant(bytes);
      },
      end(end) {
        if (done) return;
        if (!headSeen) refuse(refusalForEnd(end.error, end.code));
        else if (end.error) res.destroy();
        else res.end();
        finish(end.error);
      },
    });
    if (!channel) {
      refuse(new KubeRefusal(503, `the agent stream serving account "${request.account}" is ending; retry`));
      return finish('the agent stream is ending');
    }
    send(headPart(request, false, !hasBody(req)));
    // A request without a body is complete with its head: nothing to pump, no end to wait for (one message less).
    if (!hasBody(req)) req.resume();
    else
      pump = pumpWithCredit(req, 0, {
        send(chunk) {
          outcome.bytesIn += chunk.length;
          send({ case: 'body', value: chunk });
        },
        end: () => {
          bodyRead = true;
          send({ case: 'end', value: {} });
        },
        fail: () => cancel('the caller went away'),
      });
    // Closed before the exchange finished (its end finishes it first): the caller went away. (An HTTP/2 response
    // reports writableFinished on a reset stream, so it cannot tell.)
    res.once('close', () => cancel('the caller went away'));
    if (request.timeoutMs !== undefined) {
      timer = setTimeout(() => {
        if (done) return;
        if (!headSeen)
          refuse(new KubeRefusal(504, `the cluster did not answer within ${request.timeoutMs! / 1000} s (kube.requestTimeoutSeconds)`));
        else res.destroy();
        cancel('request timeout');
      }, request.timeoutMs);
    }
  });
}
