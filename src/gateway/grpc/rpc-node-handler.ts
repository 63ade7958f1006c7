/**
 * The Node request handler of the client RPCs (Connect, gRPC, gRPC-web), composed from connect-node's public parts —
 * `createConnectRouter`, `universalRequestFromNodeRequest`, `universalResponseToNodeResponse` — the way its
 * `connectNodeAdapter` composes them, with two differences:
 *
 * - a gRPC call that ends with an error before any message is answered Trailers-Only, in one HEADERS frame with
 *   END_STREAM (trailers-only.ts), as grpc-go and grpc-java answer it; connect-node sends a HEADERS frame, then the
 *   status in a second (trailers) frame — valid gRPC, but not the form every other early refusal of the gateway uses;
 * - each method's handler can be wrapped (`wrapHandler`), which is how undecodable requests become INVALID_ARGUMENT
 *   (undecodable-request.ts), and a handler failure is logged with the gateway's logger instead of `console.error`.
 *
 * Nothing of the library is patched: its handlers run unchanged, only their responses are written by this module.
 */
import type http from 'node:http';
import type http2 from 'node:http2';
import {
  Code,
  ConnectError,
  createConnectRouter,
  type ConnectRouter,
  type ConnectRouterOptions,
  type ContextValues,
} from '@connectrpc/connect';
import type { UniversalHandler, UniversalServerResponse } from '@connectrpc/connect/protocol';
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from '@connectrpc/connect-node';
import type { Logger } from '../../shared/logger.js';
import { respondTrailersOnly } from './trailers-only.js';

type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;

/** A Node request listener for both http and http2 servers. */
export type RpcNodeHandler = (req: NodeRequest, res: NodeResponse) => void;

/** What {@link createRpcNodeHandler} needs. */
export interface RpcNodeHandlerOptions extends ConnectRouterOptions {
  /** Registers the services. */
  routes(router: ConnectRouter): void;
  /** Serves every request whose path is no RPC method (the REST app). */
  fallback: RpcNodeHandler;
  /** The context values of each call (credentials, a pre-admitted principal). */
  contextValues(req: NodeRequest): ContextValues;
  /** Wraps each method's universal handler; it must keep the handler's properties (path, service, method…). */
  wrapHandler?(handler: UniversalHandler): UniversalHandler;
  logger: Logger;
}

/** Creates the handler. Requests for unknown paths go to `fallback` untouched. */
export function createRpcNodeHandler(options: RpcNodeHandlerOptions): RpcNodeHandler {
  const router = createConnectRouter(options);
  options.routes(router);
  const paths = new Map<string, UniversalHandler>();
  for (const handler of router.handlers) paths.set(handler.requestPath, options.wrapHandler ? options.wrapHandler(handler) : handler);
  return (req, res) => {
    const handler = paths.get((req.url ?? '').split('?', 1)[0]!);
    if (!handler) return options.fallback(req, res);
    const uReq = universalRequestFromNodeRequest(
      req as http2.Http2ServerRequest,
      res as http2.Http2ServerResponse,
      undefined,
      options.contextValues(req),
    );
    handler(uReq)
      .then((uRes) => writeResponse(uRes, req, res))
      .catch((reason: unknown) => {
        if (ConnectError.from(reason).code === Code.Aborted) return;
        options.logger.error({ err: reason, rpc: handler.requestPath }, 'RPC handler failed');
      });
  };
}

/** Writes a universal response: Trailers-Only for a gRPC error with no message, connect-node's writer otherwise. */
async function writeResponse(uRes: UniversalServerResponse, req: NodeRequest, res: NodeResponse): Promise<void> {
  const type = uRes.header?.get('content-type') ?? '';
  if (req.httpVersionMajor !== 2 || uRes.status !== 200 || !uRes.body || !uRes.trailer || !/^application\/grpc(?!-web)/i.test(type)) {
    return universalResponseToNodeResponse(uRes, res as http2.Http2ServerResponse);
  }
  // connect-node's gRPC handler has already waited for the first message (or the end), so this read does not delay
  // the response; the trailer is complete once the body is.
  const it = uRes.body[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done && uRes.trailer.get('grpc-status') !== '0') {
    const headers: Record<string, string> = {};
    uRes.header?.forEach((value, key) => (headers[key] = value));
    uRes.trailer.forEach((value, key) => (headers[key] = value));
    respondTrailersOnly(res, headers);
    return;
  }
  return universalResponseToNodeResponse({ ...uRes, body: prepended(first, it) }, res as http2.Http2ServerResponse);
}

/** The rest of `it` with an already read first result put back in front; `throw` and `return` reach `it`. */
function prepended(first: IteratorResult<Uint8Array>, it: AsyncIterator<Uint8Array>): AsyncIterable<Uint8Array> {
  let pending: IteratorResult<Uint8Array> | undefined = first;
  const iterator: AsyncIterator<Uint8Array> = {
    next() {
      const result = pending;
      pending = undefined;
      return result ? Promise.resolve(result) : it.next();
    },
    throw: (e?: unknown) => (it.throw ? it.throw(e) : Promise.reject(e)),
    return: (value?: unknown) => (it.return ? it.return(value) : Promise.resolve({ done: true as const, value: undefined })),
  };
  return { [Symbol.asyncIterator]: () => iterator };
}
