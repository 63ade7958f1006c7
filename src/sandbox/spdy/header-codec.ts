/**
 * SPDY/3 header blocks: the name/value block (32-bit counts and lengths, several values joined by NUL) and its zlib
 * compression with the SPDY dictionary, one context per direction for the whole connection.
 *
 * Outgoing blocks are written as zlib *stored* (uncompressed) deflate blocks: a valid continuation of one zlib stream
 * that any inflater (Go's compress/zlib included) reads, built synchronously and byte-aligned, each ended by an empty stored block as a
 * sync flush is, so each frame's header block is complete and ends exactly where its frame does. Incoming blocks are inflated by replaying the peer's whole compressed
 * stream so far with a sync flush and keeping the new tail; port-forward opens two streams per connection, so the
 * streams are short and this costs little.
 */
import { constants, inflateSync } from 'node:zlib';
import { SPDY3_DICTIONARY } from './dictionary.js';

/** Header names (lower-case) to values. */
export type SpdyHeaders = Record<string, string>;

/** Adler-32 of `data` (RFC 1950). */
export function adler32(data: Buffer): number {
  let a = 1;
  let b = 0;
  for (const byte of data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** Encodes headers as an uncompressed SPDY/3 name/value block. */
export function encodeNameValueBlock(headers: SpdyHeaders): Buffer {
  const entries = Object.entries(headers);
  const parts: Buffer[] = [u32(entries.length)];
  for (const [name, value] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(value, 'utf8');
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

/** Decodes an uncompressed name/value block; several values of one name are joined with ", ". Throws when malformed. */
export function decodeNameValueBlock(block: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = {};
  let at = 0;
  const take = (n: number) => {
    if (at + n > block.length) throw new Error('truncated SPDY header block');
    const out = block.subarray(at, at + n);
    at += n;
    return out;
  };
  const count = take(4).readUInt32BE(0);
  for (let i = 0; i < count; i++) {
    const name = take(take(4).readUInt32BE(0)).toString('utf8');
    const value = take(take(4).readUInt32BE(0)).toString('utf8');
    headers[name.toLowerCase()] = value.split('\0').join(', ');
  }
  return headers;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** A non-final stored deflate block (header bits 000, padded to the byte, LEN, NLEN, data). */
function storedBlock(data: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt16LE(data.length, 1);
  head.writeUInt16LE(~data.length & 0xffff, 3);
  return Buffer.concat([head, data]);
}

/** The compressing side of one connection direction. */
export class HeaderCompressor {
  private started = false;

  /** The compressed bytes of one header block (the zlib header and dictionary id precede the first). */
  compress(headers: SpdyHeaders): Buffer {
    const raw = encodeNameValueBlock(headers);
    const parts: Buffer[] = [];
    if (!this.started) {
      this.started = true;
      const cmf = 0x78; // deflate, 32 KiB window
      let flg = 0x20; // FDICT
      flg += 31 - ((cmf * 256 + flg) % 31);
      parts.push(Buffer.from([cmf, flg]), u32(adler32(SPDY3_DICTIONARY)));
    }
    for (let at = 0; at < raw.length; at += 0xffff) parts.push(storedBlock(raw.subarray(at, at + 0xffff)));
    // an empty stored block ends the block like a zlib sync flush: inflaters (Go's among them) hand out the data
    // they hold only when the next block begins
    parts.push(storedBlock(Buffer.alloc(0)));
    return Buffer.concat(parts);
  }
}

/** The decompressing side of one connection direction. */
export class HeaderDecompressor {
  private input: Buffer[] = [];
  private produced = 0;

  /** Inflates the next header block of the peer and decodes it. Throws on corrupt input. */
  decompress(block: Buffer): SpdyHeaders {
    this.input.push(block);
    const all = inflateSync(Buffer.concat(this.input), { dictionary: SPDY3_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH });
    const fresh = all.subarray(this.produced);
    this.produced = all.length;
    return decodeNameValueBlock(fresh);
  }
}
