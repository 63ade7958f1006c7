/**
 * Request-body reading and response writing shared by every handler: size-limited bodies, JSON/YAML decoding by
 * content type, JSON responses, and `Status` errors.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseAllDocuments } from 'yaml';
import { ApiError, errors } from '../errors.js';

/** The API server's request body limit (3 MiB, as kube-apiserver). */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** Reads the whole body; throws 413 past `limit` bytes (the rest of the body is drained and discarded). */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(errors.tooLarge(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        reject(errors.tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (!failed) reject(err);
    });
  });
}

/** The media type without parameters, lower-cased (`application/json`). */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Decodes a JSON body; 400 on malformed JSON or a non-object. */
export function decodeJson(body: Buffer): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') throw errors.badRequest('the request body is empty');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw errors.badRequest(`the request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Decodes a YAML (or JSON, YAML's subset) body holding one document; 400 when malformed. */
export function decodeYaml(body: Buffer): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') throw errors.badRequest('the request body is empty');
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw errors.badRequest('the request body is not valid YAML');
  const real = docs.filter((d) => d.contents !== null);
  if (real.length !== 1) throw errors.badRequest(`the request body must hold exactly one YAML document, found ${real.length}`);
  const doc = real[0]!;
  if (doc.errors.length > 0) throw errors.badRequest(`the request body is not valid YAML: ${doc.errors[0]!.message}`);
  return doc.toJS({ maxAliasCount: 100 });
}

/** Decodes a create/update body by its Content-Type: JSON or YAML; 415 for anything else (protobuf, CBOR, ...). */
export function decodeObjectBody(contentType: string | undefined, body: Buffer): unknown {
  const type = mediaType(contentType);
  if (type === '' || type === 'application/json' || type === '*/*') return decodeJson(body);
  if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') return decodeYaml(body);
  throw errors.unsupportedMediaType(contentType ?? '');
}

/** Writes a JSON response. */
export function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
  });
  res.end(text);
}

/** Writes an error as a Kubernetes `Status`; unexpected errors become 500 InternalError. */
export function sendError(res: ServerResponse, err: unknown): void {
  const apiError = err instanceof ApiError ? err : errors.internal((err as Error)?.message ?? String(err));
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, apiError.code, apiError.toStatus());
}
