/**
 * A stream of concatenated JSON values — a Kubernetes watch (one event after another) or any other JSON answer (one
 * value) — split into its values, each handed to a function whose result is written on as one line of JSON. Used by
 * the agent to check and scrub answers about Secrets on their way back (secret-answer.ts): a value is held whole
 * until it is complete, never more than `maxValueBytes` of it, so what goes back was always looked at in full.
 */
import { Transform } from 'node:stream';

const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

function tooLarge(max: number): Error {
  return new Error(`one JSON value of the answer is larger than ${max} bytes`);
}

/**
 * A Transform from JSON text to `map(value)` as JSON lines. It fails (the stream errors, nothing more is written)
 * when `map` throws, when the text holds something other than JSON objects or arrays one after another, when one
 * value grows past `maxValueBytes`, or when the text ends inside a value. Byte-level scanning is safe for UTF-8: no
 * byte of a multi-byte character is ASCII.
 */
export function createJsonValuesTransform(map: (value: unknown) => unknown, maxValueBytes: number): Transform {
  const parts: Buffer[] = [];
  let size = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;

  const emit = (stream: Transform) => {
    const text = Buffer.concat(parts, size).toString('utf8');
    parts.length = 0;
    size = 0;
    stream.push(`${JSON.stringify(map(JSON.parse(text)))}\n`);
  };

  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      try {
        let start = depth > 0 ? 0 : -1;
        for (let i = 0; i < chunk.length; i++) {
          const byte = chunk[i]!;
          if (depth === 0) {
            if (WHITESPACE.has(byte)) continue;
            if (byte !== OPEN_OBJECT && byte !== OPEN_ARRAY) throw new Error('the answer is not a sequence of JSON objects');
            depth = 1;
            start = i;
            continue;
          }
          if (inString) {
            if (escaped) escaped = false;
            else if (byte === BACKSLASH) escaped = true;
            else if (byte === QUOTE) inString = false;
            continue;
          }
          if (byte === QUOTE) inString = true;
          else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) depth++;
          else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
            depth--;
            if (depth === 0) {
              parts.push(chunk.subarray(start, i + 1));
              size += i + 1 - start;
              start = -1;
              if (size > maxValueBytes) throw tooLarge(maxValueBytes);
              emit(this);
            }
          }
        }
        if (start >= 0) {
          parts.push(chunk.subarray(start));
          size += chunk.length - start;
        }
        if (size > maxValueBytes) throw tooLarge(maxValueBytes);
        callback();
      } catch (err) {
        callback(err as Error);
      }
    },
    flush(callback) {
      callback(depth > 0 ? new Error('the answer ended inside a JSON value') : undefined);
    },
  });
}
