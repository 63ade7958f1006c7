/**
 * The kubelet's SPDY port-forward protocol (`portforward.k8s.io`) on a SPDY/3.1 session: for every forwarded
 * connection the client opens an `error` stream and then a `data` stream with headers `streamtype`, `port` and
 * `requestid`; the data stream carries the connection's bytes and the error stream, if the sandbox writes anything
 * on it, a message kubectl prints as "an error occurred forwarding". Both are closed (FIN) when the connection ends.
 */
import type { WebSocket } from 'ws';
import { SpdyServerSession, type SpdyStream } from '../spdy/session.js';
import { RstStatus } from '../spdy/frames.js';
import type { KubeObject } from '../types.js';
import { serviceFor } from './services.js';

interface Pair {
  error?: SpdyStream;
  data?: SpdyStream;
  done: boolean;
}

/** Serves port-forward streams on a SPDY session for `pod`. */
function servePortForward(session: SpdyServerSession, pod: KubeObject): void {
  const pairs = new Map<string, Pair>();
  const finish = (key: string, pair: Pair, message?: string) => {
    pair.done = true;
    if (message && pair.error) pair.error.write(Buffer.from(message));
    pair.error?.end();
    pair.data?.end();
    pairs.delete(key);
  };

  session.on('stream', (stream: SpdyStream) => {
    const type = stream.headers.streamtype;
    const portText = stream.headers.port ?? '';
    const key = stream.headers.requestid ?? portText;
    if (type !== 'error' && type !== 'data') {
      stream.reset(RstStatus.protocolError);
      return;
    }
    stream.reply();
    const pair = pairs.get(key) ?? { done: false };
    pairs.set(key, pair);
    stream.on('close', () => {
      if (!pair.done && (type === 'data' || !pair.data)) pairs.delete(key);
    });
    if (type === 'error') {
      pair.error = stream;
      if (pair.done) stream.end();
      return;
    }
    pair.data = stream;
    const port = Number(portText);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      finish(key, pair, `invalid port: ${JSON.stringify(portText)}`);
      return;
    }
    const service = serviceFor(
      {
        write: (chunk) => stream.write(chunk),
        end: () => finish(key, pair),
      },
      pod,
      port,
    );
    stream.on('data', (chunk: Buffer) => service.data(chunk));
    stream.on('end', () => service.end());
  });
}

/** Runs SPDY/3.1 port-forward tunnelled in the binary messages of an accepted WebSocket; resolves when it closes. */
export function runTunneledPortForward(ws: WebSocket, pod: KubeObject): Promise<void> {
  const session = new SpdyServerSession((frame) => {
    if (ws.readyState === ws.OPEN) ws.send(frame, { binary: true });
  });
  servePortForward(session, pod);
  session.on('error', () => ws.close(1002, 'SPDY protocol error'));
  ws.on('message', (raw, isBinary) => {
    if (!isBinary) {
      ws.close(1003, 'binary messages only');
      return;
    }
    session.receive(Array.isArray(raw) ? Buffer.concat(raw) : Buffer.isBuffer(raw) ? raw : Buffer.from(raw));
  });
  ws.on('error', () => ws.terminate());
  return new Promise((resolve) => {
    ws.on('close', () => {
      session.close();
      resolve();
    });
  });
}
