/**
 * Guards in front of connect-node for malformed requests that the library would answer with a 5xx, an INTERNAL
 * error or nothing at all (docs/architecture.md, rule 7: bad input gets a typed error):
 * - an HTTP/1.1 request that the Node parser refuses (unknown method, raw bytes in the path, headers too large) gets
 *   a JSON `{error, message}` 4xx instead of Node's bare 400/431;
 * - gRPC over HTTP/1.1 gets 426 with a JSON body (connect-node answers a bodiless 505);
 * - a Connect GET whose `message` is not base64 gets INVALID_ARGUMENT (connect-es throws a plain Error: INTERNAL);
 * - a compressed message that does not decompress is INVALID_ARGUMENT (connect-node says INTERNAL for most zlib
 *   errors).
 *
 * Error messages that connect-es could not send (a lone UTF-16 surrogate, a huge echoed input) are made sendable where
 * the gateway writes them: sendable-errors.ts.
 */
import type http from 'node:http';
import type http2 from 'node:http2';
import type { Duplex } from 'node:stream';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Compression } from '@connectrpc/connect/protocol';
import { compressionBrotli, compressionGzip } from '@connectrpc/connect-node';

type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;
type AnyResponse = http.ServerResponse | http2.Http2ServerResponse;

/** Node's `clientError` handler: a JSON 4xx for a request the HTTP/1.1 parser refused, then the socket closes. */
export function answerClientError(err: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex & { bytesWritten?: number }): void {
  if (err.code === 'ECONNRESET' || !socket.writable || (socket.bytesWritten ?? 0) > 0) {
    socket.destroy();
    return;
  }
  const [status, reason] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout']
        : [400, 'Bad Request'];
  const body = JSON.stringify({
    error: status === 400 ? 'bad_request' : status === 431 ? 'headers_too_large' : 'request_timeout',
    message: `malformed HTTP request (${err.code ?? 'parse error'})`,
  });
  // A HEAD answer has no body (a client would read one as the start of the next response).
  const head = err.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${head ? '' : body}`,
  );
}

/**
 * Answers the request itself when it is one of the malformed shapes above (returns true); otherwise leaves it to
 * connect-node (returns false).
 */
export function answerMalformedRpc(req: AnyRequest, res: AnyResponse): boolean {
  const type = String(req.headers['content-type'] ?? '');
  if (req.httpVersionMajor === 1 && /^application\/grpc(?!-web)/i.test(type)) {
    const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
    (res as http.ServerResponse).writeHead(426, {
      'content-type': 'application/json',
      upgrade: encrypted ? 'h2' : 'h2c',
      connection: 'close',
    });
    res.end(
      JSON.stringify({
        error: 'http2_required',
        message: 'gRPC needs HTTP/2 (use the gRPC port with HTTP/2, or the Connect protocol over HTTP/1.1)',
      }),
    );
    return true;
  }
  if (req.method === 'GET' && req.url?.includes('?')) {
    const query = new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1));
    if (query.get('base64') === '1' && !/^[A-Za-z0-9+/_-]*={0,2}$/.test(query.get('message') ?? '')) {
      (res as http.ServerResponse).writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'invalid_argument', message: 'the message query parameter is not base64' }));
      return true;
    }
  }
  return false;
}

function strict(compression: Compression): Compression {
  return {
    name: compression.name,
    compress: (bytes) => compression.compress(bytes),
    decompress: (bytes, readMaxBytes) =>
      compression.decompress(bytes, readMaxBytes).catch((err: unknown) => {
        const error = ConnectError.from(err);
        if (error.code !== Code.Internal) throw error;
        throw new ConnectError(
          `decompression failed: the message is not valid ${compression.name}`,
          Code.InvalidArgument,
          undefined,
          undefined,
          err,
        );
      }),
  };
}

/** gzip and br as connect-node serves them, but a message that does not decompress is INVALID_ARGUMENT. */
export const STRICT_COMPRESSIONS: readonly Compression[] = [strict(compressionGzip), strict(compressionBrotli)];
