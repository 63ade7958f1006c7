/**
 * The error answer of a unary call in each protocol's own form — Connect's JSON error (with the HTTP status of its
 * code), gRPC's status trailer, gRPC-web's trailer frame — read and rewritten after connect-node produced it, or
 * written when connect-node could not. Used for calls that failed before any interceptor ran (while their request was
 * read and decoded), where no interceptor can change the error: see undecodable-request.ts.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { createAsyncIterable, encodeEnvelope, type UniversalServerResponse } from '@connectrpc/connect/protocol';
import { codeToHttpStatus, errorFromJsonBytes, errorToJsonBytes } from '@connectrpc/connect/protocol-connect';
import { trailerFlag, trailerParse, trailerSerialize } from '@connectrpc/connect/protocol-grpc-web';

/** Turns the error of an answer into the one to send; returns its argument to leave the answer as it is. */
export type ErrorRewrite = (error: ConnectError) => ConnectError;

/**
 * Applies `rewrite` to the error of a unary call's answer, in the answer's protocol; an answer that carries no error
 * is returned as it was. The answer must be complete (the call is over), since its whole body is read.
 */
export async function rewriteUnaryError(res: UniversalServerResponse, rewrite: ErrorRewrite): Promise<UniversalServerResponse> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of res.body!) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  // The chunks as they were (none for a gRPC error: rpc-node-handler.ts then answers Trailers-Only).
  const out: UniversalServerResponse = { ...res, body: createAsyncIterable(chunks) };
  const header = res.header ?? new Headers();
  const type = header.get('content-type') ?? '';
  if (/^application\/grpc-web/i.test(type)) {
    // gRPC-web: the status is in the last frame, the trailer frame.
    if (body.length < 5 || body[0] !== trailerFlag || body.readUInt32BE(1) !== body.length - 5) return out;
    const trailer = trailerParse(body.subarray(5));
    if (!rewriteGrpcStatus(trailer, rewrite)) return out;
    return { ...out, body: createAsyncIterable([encodeEnvelope(trailerFlag, trailerSerialize(trailer))]) };
  }
  if (/^application\/grpc/i.test(type)) {
    // gRPC: the status is in the trailer (sent Trailers-Only by rpc-node-handler.ts when there is no message).
    if (res.trailer) rewriteGrpcStatus(res.trailer, rewrite);
    return out;
  }
  if (res.status !== 200 && /^application\/json/i.test(type) && !header.has('content-encoding')) {
    // Connect unary: a JSON error body (not compressed: errors this small never are), the HTTP status from its code.
    let error: ConnectError;
    try {
      error = errorFromJsonBytes(body, undefined, new ConnectError('not a Connect error', Code.Unknown));
    } catch {
      return out;
    }
    const rewritten = rewrite(error);
    if (rewritten === error) return out;
    const json = errorToJsonBytes(rewritten, {});
    header.set('content-length', String(json.byteLength));
    return { ...out, status: codeToHttpStatus(rewritten.code), header, body: createAsyncIterable([json]) };
  }
  return out;
}

/**
 * The answer of a unary call that ended with `error`, in the protocol of its request `contentType`, for a call
 * connect-node could not answer itself. The caller passes an error whose message can be sent (sendable-errors.ts).
 */
export function unaryErrorAnswer(contentType: string, error: ConnectError): UniversalServerResponse {
  const status = new Headers({ 'grpc-status': String(error.code), 'grpc-message': encodeURIComponent(error.rawMessage) });
  const json = /\+json/i.test(contentType);
  if (/^application\/grpc-web/i.test(contentType)) {
    return {
      status: 200,
      header: new Headers({ 'content-type': json ? 'application/grpc-web+json' : 'application/grpc-web+proto' }),
      body: createAsyncIterable([encodeEnvelope(trailerFlag, trailerSerialize(status))]),
    };
  }
  if (/^application\/grpc/i.test(contentType)) {
    return {
      status: 200,
      header: new Headers({ 'content-type': json ? 'application/grpc+json' : 'application/grpc+proto' }),
      body: createAsyncIterable([]),
      trailer: status,
    };
  }
  return {
    status: codeToHttpStatus(error.code),
    header: new Headers({ 'content-type': 'application/json' }),
    body: createAsyncIterable([errorToJsonBytes(error, {})]),
  };
}

/** Applies `rewrite` to the status in gRPC `headers` (a trailer); true when it changed it. */
function rewriteGrpcStatus(headers: Headers, rewrite: ErrorRewrite): boolean {
  const code = Number(headers.get('grpc-status') ?? '0');
  if (!Number.isInteger(code) || code === 0) return false;
  const error = new ConnectError(decodeGrpcMessage(headers.get('grpc-message') ?? ''), code as Code);
  const rewritten = rewrite(error);
  if (rewritten === error) return false;
  headers.set('grpc-status', String(rewritten.code));
  headers.set('grpc-message', encodeURIComponent(rewritten.rawMessage));
  // It restated the old status (code and message).
  headers.delete('grpc-status-details-bin');
  return true;
}

function decodeGrpcMessage(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
