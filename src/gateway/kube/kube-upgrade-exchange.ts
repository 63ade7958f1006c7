/**
 * One `/k8s/{account}` upgrade (kubectl exec, attach, port-forward over WebSocket) carried over a local agent stream:
 * the upgrade request goes to the cluster through the agent; a 101 from the cluster is written to the caller's socket
 * and from then on raw bytes flow both ways under credit, so the WebSocket handshake and frames are the cluster's and
 * the caller's own. Any other answer is written as a plain HTTP response and the connection closed.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { createCreditReceiver, KUBE_WINDOW_BYTES, pumpWithCredit, type CreditPump } from '../../shared/kube-credit.js';
import type { LiveSession } from '../agents/session-registry.js';
import {
  headersForCaller,
  headPart,
  outcomeOf,
  IMPERSONATED_HEADER,
  impersonationHeader,
  refusalForEnd,
  type ExchangeOutcome,
  type ExchangeRequest,
} from './kube-exchange.js';
import type { KubeChannel, KubeRequestPart } from '../agents/kube-mux.js';
import { KubeRefusal, sendSocketStatus } from './kube-status.js';

/** Writes a status line and headers on a raw socket. */
export function writeRawHead(socket: Duplex, status: number, statusText: string, headers: Record<string, string | string[]>): void {
  const lines = [`HTTP/1.1 ${status} ${statusText}`];
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v}`);
  }
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
}

/** Runs the upgrade on `session`; resolves when both sides are done. Never rejects. */
export function runUpgradeExchange(session: LiveSession, request: ExchangeRequest, socket: Duplex, rest: Buffer): Promise<ExchangeOutcome> {
  return new Promise((resolve) => {
    const outcome = outcomeOf();
    let headSeen = false;
    let upgraded = false;
    let done = false;
    let pump: CreditPump | undefined;
    const receiver = createCreditReceiver(KUBE_WINDOW_BYTES, (bytes) => send({ case: 'window', value: { bytes } }));
    const send = (part: KubeRequestPart) => channel?.send(part) ?? false;
    const finish = (error = '') => {
      if (done) return;
      done = true;
      if (error && !outcome.error) outcome.error = error;
      pump?.stop();
      channel?.close();
      resolve(outcome);
    };
    const cancel = (reason: string) => {
      if (done) return;
      send({ case: 'cancel', value: { reason } });
      socket.destroy();
      finish(reason);
    };

    const channel: KubeChannel | undefined = session.openKube({
      head(head) {
        if (done || headSeen) return;
        headSeen = true;
        outcome.status = head.status;
        outcome.impersonatedUser = head.impersonatedUser;
        outcome.impersonatedGroups = [...head.impersonatedGroups];
        if (head.status === 101) {
          upgraded = true;
          const headers = headersForCaller(head);
          if (request.tellImpersonation) headers[IMPERSONATED_HEADER] = impersonationHeader(head);
          headers.connection = 'Upgrade';
          headers.upgrade = head.headers.find((h) => h.name === 'upgrade')?.value ?? 'websocket';
          writeRawHead(socket, 101, 'Switching Protocols', headers);
          if (rest.length > 0) socket.unshift(rest);
          pump = pumpWithCredit(socket, 0, {
            send(chunk) {
              outcome.bytesIn += chunk.length;
              send({ case: 'body', value: chunk });
            },
            end: () => void send({ case: 'end', value: {} }),
            fail: () => cancel('the caller went away'),
          });
        } else {
          // Not upgraded (a 403 from the cluster's RBAC, a 400…): a plain answer, then the connection closes.
          const headers = headersForCaller(head, (name) => name !== 'content-length');
          if (request.tellImpersonation) headers[IMPERSONATED_HEADER] = impersonationHeader(head);
          headers.connection = 'close';
          writeRawHead(socket, head.status, http.STATUS_CODES[head.status] ?? 'Unknown', headers);
        }
      },
      body(chunk) {
        if (done) return;
        if (!receiver.received(chunk.length)) return cancel('the agent sent more bytes than granted');
        outcome.bytesOut += chunk.length;
        socket.write(chunk, () => receiver.delivered(chunk.length));
      },
      window(bytes) {
        pump?.grant(bytes);
      },
      end(end) {
        if (done) return;
        if (!headSeen) sendSocketStatus(socket, refusalForEnd(end.error, end.code));
        else if (end.error && upgraded) socket.destroy();
        else socket.end();
        finish(end.error);
      },
    });
    if (!channel) {
      sendSocketStatus(socket, new KubeRefusal(503, `the agent stream serving account "${request.account}" is ending; retry`));
      return finish('the agent stream is ending');
    }
    socket.on('error', () => {});
    socket.once('close', () => {
      if (!done) cancel('the caller went away');
    });
    send(headPart(request, true, false));
  });
}
