/**
 * The one way REST routes read a JSON request body: `application/json` only (415), at most `maxBytes` (413, checked
 * against Content-Length and again while reading, so a huge body is never buffered), UTF-8 (400), well-formed
 * JSON (400) nested at most MAX_NESTING_DEPTH levels (400) without NUL characters or lone surrogates (400). What the
 * JSON must contain is the route's business.
 */
import type { Context } from 'hono';
import { nestingProblem } from '../../shared/nesting-depth.js';
import { findUnstorableText } from '../../shared/unstorable-text.js';
import { HttpError } from './errors.js';

/** Reads a JSON body of at most `maxBytes`, stopping as soon as the limit is passed. */
export async function readJsonBody(c: Context, maxBytes: number): Promise<unknown> {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new HttpError(
      415,
      'unsupported_media_type',
      `the body must be application/json (got ${type ? JSON.stringify(type.slice(0, 100)) : 'no content type'})`,
    );
  }
  const tooLarge = () => new HttpError(413, 'payload_too_large', `the body is larger than ${maxBytes} bytes`);
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  const stream = c.req.raw.body;
  if (!stream) throw new HttpError(400, 'bad_request', 'the request has no body');
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new HttpError(400, 'bad_request', 'the body is not valid UTF-8');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, 'bad_request', `the body is not valid JSON: ${(err as Error).message}`);
  }
  // A body nested deeper than any manifest would fail later in code that recurses (a task's structured clone): here it is a 400.
  const tooDeep = nestingProblem(body, 'the body');
  if (tooDeep) throw new HttpError(400, 'bad_request', tooDeep);
  // Postgres cannot store a NUL character (or jsonb an escaped lone surrogate): refused here, not by a failing insert (a 500)
  const unstorable = findUnstorableText(body, 'body');
  if (unstorable) throw new HttpError(400, 'bad_request', unstorable);
  return body;
}
