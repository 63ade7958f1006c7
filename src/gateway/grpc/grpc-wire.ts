/**
 * The gRPC wire format over HTTP/2, as far as the agent stream endpoint needs it: length-prefixed messages (a flag
 * byte — bit 0 set for compressed — and a big-endian uint32 length), `grpc-status` / `grpc-message` trailers with
 * percent-encoded messages, and `grpc-timeout` values. See https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md.
 */
import { gunzipSync } from 'node:zlib';
import { Code, ConnectError } from '@connectrpc/connect';
import { sendableMessage } from '../http/sendable-errors.js';

/** One message as read off the wire (still compressed when `compressed`). */
export interface WireMessage {
  compressed: boolean;
  data: Uint8Array;
}

/** Splits a byte stream into messages; holds at most one partial message. */
export interface MessageDecoder {
  /** Appends bytes; returns the messages they complete. Throws a ConnectError on a malformed or oversized prefix. */
  push(chunk: Buffer): WireMessage[];
  /** True when bytes of an unfinished message are held (a stream ending now was cut mid-message). */
  readonly partial: boolean;
}

/** Creates a decoder refusing messages larger than `maxBytes` (RESOURCE_EXHAUSTED) before buffering them. */
export function createMessageDecoder(maxBytes: number): MessageDecoder {
  return new PrefixDecoder(maxBytes);
}

class PrefixDecoder implements MessageDecoder {
  private held: Buffer | undefined;

  constructor(private readonly maxBytes: number) {}

  get partial(): boolean {
    return this.held !== undefined && this.held.length > 0;
  }

  push(chunk: Buffer): WireMessage[] {
    let buf = this.held ? Buffer.concat([this.held, chunk]) : chunk;
    const out: WireMessage[] = [];
    while (buf.length >= 5) {
      const flags = buf[0]!;
      if ((flags & ~1) !== 0) throw new ConnectError(`protocol error: invalid message flags 0x${flags.toString(16)}`, Code.InvalidArgument);
      const length = buf.readUInt32BE(1);
      if (length > this.maxBytes) throw tooLarge(length, this.maxBytes);
      if (buf.length < 5 + length) break;
      // A copy: the chunk's memory is not kept alive by a message the session holds on to.
      out.push({ compressed: flags === 1, data: Uint8Array.prototype.slice.call(buf, 5, 5 + length) });
      buf = buf.subarray(5 + length);
    }
    this.held = buf.length > 0 ? Buffer.from(buf) : undefined;
    return out;
  }
}

/** The payload of a message: decompressed with `encoding` when flagged, never larger than `maxBytes`. */
export function messagePayload(message: WireMessage, encoding: string, maxBytes: number): Uint8Array {
  if (!message.compressed) return message.data;
  if (encoding === 'identity') {
    throw new ConnectError('protocol error: received a compressed message without grpc-encoding', Code.Internal);
  }
  try {
    return gunzipSync(message.data, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBytes + 1, maxBytes);
    throw new ConnectError(`protocol error: cannot decompress a ${encoding} message`, Code.InvalidArgument);
  }
}

/** The compressions the endpoint reads (`grpc-encoding`); others are refused with UNIMPLEMENTED. */
export const SUPPORTED_ENCODINGS = ['identity', 'gzip'] as const;

/** A message ready to write: prefix and payload in one buffer (never compressed). */
export function encodeMessage(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + payload.length);
  out[0] = 0;
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, 5);
  return out;
}

/**
 * The status trailers of a call that ended with `error` (OK without one), with the error's metadata; the message is
 * made sendable (well-formed, at most 1000 characters: sendable-errors.ts).
 */
export function statusTrailers(error?: ConnectError): Record<string, string> {
  if (!error) return { 'grpc-status': '0' };
  const trailers: Record<string, string> = {};
  error.metadata.forEach((value, key) => {
    if (!key.startsWith('grpc-') && !key.startsWith(':')) trailers[key] = value;
  });
  trailers['grpc-status'] = String(error.code);
  trailers['grpc-message'] = encodeGrpcMessage(sendableMessage(error.rawMessage));
  return trailers;
}

/** Percent-encodes a status message as gRPC requires: bytes outside printable ASCII, and `%`. */
export function encodeGrpcMessage(message: string): string {
  let out = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Milliseconds of a `grpc-timeout` header (`<digits><H|M|S|m|u|n>`); undefined when absent, NaN when malformed. */
export function parseGrpcTimeout(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (!m) return NaN;
  const unit = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 }[m[2] as 'H'];
  return Number(m[1]) * unit;
}

function tooLarge(length: number, maxBytes: number): ConnectError {
  return new ConnectError(`message size ${length} is larger than configured readMaxBytes ${maxBytes}`, Code.ResourceExhausted);
}
