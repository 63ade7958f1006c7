/**
 * The gRPC Trailers-Only response (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md): a call that ends
 * before any message is answered with ONE HEADERS frame carrying `:status`, `content-type`, `grpc-status` and
 * `grpc-message`, with END_STREAM set.
 *
 * Why not `res.writeHead(200, {...}); res.end()`: with Node's http2 compatibility API that sends the HEADERS frame
 * without END_STREAM (it waits for trailers) and then an empty DATA frame that ends the stream, with no trailers. A
 * C-core client (Python, C++, Ruby, PHP) reads no status from that: it waits until it half-closes and then reports
 * UNKNOWN "Stream removed". Node's own clients happen to accept it, which is how it went unnoticed.
 */
import http2 from 'node:http2';
import type http from 'node:http';

type AnyResponse = http.ServerResponse | http2.Http2ServerResponse;

/**
 * Ends the response with `headers` (content-type, grpc-status, grpc-message, any metadata; no pseudo-headers) and no
 * body: on HTTP/2 in one HEADERS frame with END_STREAM; on HTTP/1.1 (gRPC-web) as headers and an empty body.
 * The caller must not have sent headers yet and must not touch the response afterwards. Returns false (sending
 * nothing) when the stream is already gone or its headers were sent.
 *
 * The request side is left as it is: a caller that did not read the body and wants the peer to stop sending it
 * resets the HTTP/2 stream with NO_ERROR afterwards (RFC 9113 §8.1); Node sends that reset only after the HEADERS.
 */
export function respondTrailersOnly(res: AnyResponse, headers: Record<string, string>): boolean {
  if (res.headersSent || res.writableEnded || res.destroyed) return false;
  if (res instanceof http2.Http2ServerResponse) {
    const stream = res.stream;
    if (stream.destroyed || stream.closed || stream.headersSent) return false;
    // The core API, not the compatibility layer: `endStream` puts END_STREAM on the HEADERS frame itself.
    stream.respond({ ...headers, [http2.constants.HTTP2_HEADER_STATUS]: 200 }, { endStream: true });
    return true;
  }
  res.writeHead(200, headers);
  res.end();
  return true;
}
