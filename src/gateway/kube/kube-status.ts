/**
 * The error model of `/k8s/{account}` (docs/kubectl.md): what the gateway itself answers is a Kubernetes `Status`
 * object — what kubectl and every Kubernetes client print — with the HTTP status as its code. Answers from the
 * cluster pass through untouched.
 */
import http from 'node:http';
import type http2 from 'node:http2';
import type { Duplex } from 'node:stream';

/** Status reasons by HTTP status (metav1.StatusReason). */
const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  429: 'TooManyRequests',
  500: 'InternalError',
  502: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** An answer the gateway gives in place of the cluster. */
export class KubeRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The Status object's JSON for an HTTP status and message. */
function statusBody(status: number, message: string): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: REASONS[status] ?? 'Unknown',
    code: status,
  });
}

type AnyResponse = http.ServerResponse | http2.Http2ServerResponse;

/** Answers a request with a Status (nothing when headers already went out: the connection is cut instead). */
export function sendStatus(res: AnyResponse, refusal: KubeRefusal): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = statusBody(refusal.status, refusal.message);
  (res as http.ServerResponse).writeHead(refusal.status, {
    ...refusal.headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

/** Answers an upgrade request on its raw socket with a Status and closes the connection. */
export function sendSocketStatus(socket: Duplex, refusal: KubeRefusal): void {
  if (socket.destroyed) return;
  const body = statusBody(refusal.status, refusal.message);
  const extra = Object.entries(refusal.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${refusal.status} ${http.STATUS_CODES[refusal.status] ?? 'Error'}\r\n${extra}` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
