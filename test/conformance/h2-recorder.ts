/**
 * A transparent HTTP/2 (h2c) recorder between an agent and the gateway: every request the agent opens is forwarded as
 * it is, and both directions' gRPC messages are decoded into a transcript (protobuf `ConnectRequest` /
 * `ConnectResponse`), with the response headers, whether they ended the stream (Trailers-Only) and the trailers. The
 * same recorder sits in front of the mini agent and of Outpost's own agent, so one set of transcript rules
 * ({@link checkTranscript}) judges both. It can also cut every connection, as a network failure would.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { fromBinary } from '@bufbuild/protobuf';
import { gunzipSync } from 'node:zlib';
import {
  ConnectRequestSchema,
  ConnectResponseSchema,
  type ConnectRequest,
  type ConnectResponse,
} from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { CONNECT_PATH } from './grpc-wire.js';

/** One message of a recorded stream, in the order the recorder saw it. */
export type TranscriptEntry =
  | { dir: 'agent'; at: number; message: ConnectRequest }
  | { dir: 'gateway'; at: number; message: ConnectResponse };

/** One recorded HTTP/2 stream (one agent connection attempt). */
export interface RecordedStream {
  path: string;
  requestHeaders: Record<string, string>;
  openedAt: number;
  endedAt?: number;
  entries: TranscriptEntry[];
  responseHeaders: Record<string, string>;
  /** The response HEADERS frame carried END_STREAM (Trailers-Only). */
  trailersOnly: boolean;
  trailers: Record<string, string>;
  /** `grpc-status` of the end (trailers, or headers for Trailers-Only). */
  grpcStatus?: number;
  /** Bytes that did not decode as messages (should stay empty). */
  undecodable: string[];
}

/** A running recorder. */
export interface H2Recorder {
  /** `http://127.0.0.1:port` to give the agent instead of the gateway. */
  readonly url: string;
  /** `127.0.0.1:port`. */
  readonly address: string;
  /** Every agent stream recorded so far (Connect calls only), in the order they opened. */
  readonly streams: RecordedStream[];
  /** Destroys every open connection in both directions (the listener stays up). */
  cutAll(): void;
  close(): Promise<void>;
}

function plain(h: http2.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return out;
}

/** Splits gRPC length-prefixed messages out of a growing buffer. */
function createDeframer(onMessage: (body: Uint8Array, compressed: boolean) => void) {
  let buf: Buffer = Buffer.alloc(0);
  return (chunk: Buffer) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    while (buf.length >= 5) {
      const len = buf.readUInt32BE(1);
      if (buf.length < 5 + len) return;
      onMessage(new Uint8Array(buf.subarray(5, 5 + len)), (buf[0]! & 1) === 1);
      buf = buf.subarray(5 + len);
    }
  };
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'http2-settings', 'host']);

function forwardable(h: http2.IncomingHttpHeaders): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP_BY_HOP.has(k) && k !== ':authority' && k !== ':scheme') out[k] = v;
  return out;
}

/** Starts a recorder on 127.0.0.1:0 forwarding to `targetUrl` (the gateway's gRPC URL). */
export async function startH2Recorder(targetUrl: string): Promise<H2Recorder> {
  const streams: RecordedStream[] = [];
  const sessions = new Set<http2.Http2Session>();
  const server = http2.createServer();
  server.on('session', (downSession) => {
    sessions.add(downSession);
    const upSession = http2.connect(targetUrl);
    sessions.add(upSession);
    upSession.on('error', () => downSession.destroy());
    downSession.on('error', () => upSession.destroy());
    upSession.on('close', () => {
      sessions.delete(upSession);
      downSession.destroy();
    });
    downSession.on('close', () => {
      sessions.delete(downSession);
      upSession.destroy();
    });
    downSession.on('stream', (down, headers) => {
      const path = String(headers[':path']);
      const rec: RecordedStream = {
        path,
        requestHeaders: plain(headers),
        openedAt: Date.now(),
        entries: [],
        responseHeaders: {},
        trailersOnly: false,
        trailers: {},
        undecodable: [],
      };
      const isAgent = path === CONNECT_PATH;
      if (isAgent) streams.push(rec);
      const requestEncoding = String(headers['grpc-encoding'] ?? 'identity');
      let responseEncoding = 'identity';
      const decode = <T>(body: Uint8Array, compressed: boolean, encoding: string, parse: (b: Uint8Array) => T): T | undefined => {
        try {
          return parse(compressed && encoding === 'gzip' ? new Uint8Array(gunzipSync(body)) : body);
        } catch (err) {
          rec.undecodable.push((err as Error).message);
          return undefined;
        }
      };
      const up = upSession.request(forwardable(headers), { endStream: false });
      const upDeframe = createDeframer((body, compressed) => {
        const m = decode(body, compressed, requestEncoding, (b) => fromBinary(ConnectRequestSchema, b));
        if (m) rec.entries.push({ dir: 'agent', at: Date.now(), message: m });
      });
      const downDeframe = createDeframer((body, compressed) => {
        const m = decode(body, compressed, responseEncoding, (b) => fromBinary(ConnectResponseSchema, b));
        if (m) rec.entries.push({ dir: 'gateway', at: Date.now(), message: m });
      });
      down.on('data', (chunk: Buffer) => {
        if (isAgent) upDeframe(chunk);
        if (!up.destroyed) up.write(chunk);
      });
      down.on('end', () => {
        if (!up.destroyed) up.end();
      });
      down.on('error', () => {});
      up.on('error', () => {});
      down.on('close', () => {
        if (!up.closed) up.close(down.rstCode && down.rstCode !== 0 ? down.rstCode : http2.constants.NGHTTP2_CANCEL);
      });
      let trailers: http2.OutgoingHttpHeaders | undefined;
      up.on('response', (h, flags) => {
        rec.responseHeaders = plain(h);
        responseEncoding = String(h['grpc-encoding'] ?? 'identity');
        const endStream = (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0;
        if (endStream) {
          rec.trailersOnly = true;
          if (h['grpc-status'] !== undefined) rec.grpcStatus = Number(h['grpc-status']);
        }
        if (down.destroyed || down.closed) return;
        down.respond(forwardable(h), endStream ? { endStream: true } : { waitForTrailers: true });
      });
      up.on('trailers', (h) => {
        rec.trailers = plain(h);
        if (h['grpc-status'] !== undefined) rec.grpcStatus = Number(h['grpc-status']);
        trailers = forwardable(h);
      });
      down.on('wantTrailers', () => {
        if (trailers && Object.keys(trailers).length > 0) down.sendTrailers(trailers);
        else down.close(http2.constants.NGHTTP2_NO_ERROR);
      });
      up.on('data', (chunk: Buffer) => {
        if (isAgent) downDeframe(chunk);
        if (!down.destroyed && !down.closed && down.headersSent) down.write(chunk);
      });
      up.on('end', () => {
        rec.endedAt = Date.now();
        if (rec.grpcStatus === undefined && rec.responseHeaders['grpc-status'] !== undefined)
          rec.grpcStatus = Number(rec.responseHeaders['grpc-status']);
        if (!down.destroyed && !down.closed && down.headersSent && !rec.trailersOnly) down.end();
      });
      up.on('close', () => {
        rec.endedAt ??= Date.now();
        if (!down.destroyed && !down.closed) down.close(up.rstCode && up.rstCode !== 0 ? up.rstCode : http2.constants.NGHTTP2_NO_ERROR);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    address: `127.0.0.1:${port}`,
    streams,
    cutAll() {
      for (const s of [...sessions]) s.destroy();
    },
    async close() {
      for (const s of [...sessions]) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
