/**
 * SPDY/3.1 framing (only what port-forward needs): control frames SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING,
 * GOAWAY, HEADERS, WINDOW_UPDATE and DATA frames. {@link FrameParser} cuts a byte stream that arrives in arbitrary
 * pieces (Go's framer writes field by field, each a WebSocket message of its own) into whole frames; the encoders
 * build one Buffer per frame. Header blocks stay compressed here; the session owns the compression contexts.
 */

/** Control frame types. */
export const FrameType = {
  synStream: 1,
  synReply: 2,
  rstStream: 3,
  settings: 4,
  ping: 6,
  goAway: 7,
  headers: 8,
  windowUpdate: 9,
} as const;

/** Flag bits: FIN on SYN_STREAM, SYN_REPLY, HEADERS and DATA. */
export const FLAG_FIN = 0x01;

/** RST_STREAM status codes used here. */
export const RstStatus = {
  protocolError: 1,
  invalidStream: 2,
  refusedStream: 3,
  cancel: 5,
  internalError: 6,
  flowControlError: 7,
} as const;

/** SETTINGS id of the initial stream window size. */
export const SETTINGS_INITIAL_WINDOW_SIZE = 7;

/** The largest DATA payload this framer writes in one frame. */
export const MAX_DATA_PAYLOAD = 16 * 1024;

/** A parsed frame. */
export type Frame =
  | { kind: 'data'; streamId: number; flags: number; data: Buffer }
  | { kind: 'control'; type: number; version: number; flags: number; payload: Buffer };

/** Accumulates bytes and yields complete frames. */
export class FrameParser {
  private buffered: Buffer[] = [];
  private length = 0;

  /** Adds bytes; returns every frame now complete. Throws on a frame longer than `maxLength`. */
  push(chunk: Buffer, maxLength = 1 << 24): Frame[] {
    this.buffered.push(chunk);
    this.length += chunk.length;
    const frames: Frame[] = [];
    let all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
    let at = 0;
    while (all.length - at >= 8) {
      const len = all.readUIntBE(at + 5, 3);
      if (len > maxLength) throw new Error(`SPDY frame of ${len} bytes is too large`);
      if (all.length - at < 8 + len) break;
      const first = all.readUInt32BE(at);
      const flags = all[at + 4]!;
      const payload = Buffer.from(all.subarray(at + 8, at + 8 + len));
      if (first & 0x80000000) {
        frames.push({ kind: 'control', version: (first >>> 16) & 0x7fff, type: first & 0xffff, flags, payload });
      } else {
        frames.push({ kind: 'data', streamId: first & 0x7fffffff, flags, data: payload });
      }
      at += 8 + len;
    }
    all = all.subarray(at);
    this.buffered = all.length > 0 ? [all] : [];
    this.length = all.length;
    return frames;
  }

  /** Bytes held back waiting for the rest of a frame. */
  get pending(): number {
    return this.length;
  }
}

function control(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE((0x8000 | 3) * 0x10000 + type);
  head[4] = flags;
  head.writeUIntBE(payload.length, 5, 3);
  return Buffer.concat([head, payload]);
}

function words(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
}

/** A DATA frame. */
export function dataFrame(streamId: number, data: Buffer, fin = false): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff);
  head[4] = fin ? FLAG_FIN : 0;
  head.writeUIntBE(data.length, 5, 3);
  return Buffer.concat([head, data]);
}

/** A SYN_STREAM (the block is already compressed). */
export function synStreamFrame(streamId: number, block: Buffer, fin = false, associated = 0, priority = 0): Buffer {
  const prio = Buffer.from([(priority & 7) << 5, 0]);
  return control(
    FrameType.synStream,
    fin ? FLAG_FIN : 0,
    Buffer.concat([words(streamId & 0x7fffffff, associated & 0x7fffffff), prio, block]),
  );
}

/** A SYN_REPLY (the block is already compressed). */
export function synReplyFrame(streamId: number, block: Buffer, fin = false): Buffer {
  return control(FrameType.synReply, fin ? FLAG_FIN : 0, Buffer.concat([words(streamId & 0x7fffffff), block]));
}

/** A RST_STREAM. */
export function rstStreamFrame(streamId: number, status: number): Buffer {
  return control(FrameType.rstStream, 0, words(streamId & 0x7fffffff, status));
}

/** A SETTINGS frame of (id, value) pairs. */
export function settingsFrame(entries: [id: number, value: number][]): Buffer {
  const body = Buffer.alloc(4 + entries.length * 8);
  body.writeUInt32BE(entries.length);
  entries.forEach(([id, value], i) => {
    body.writeUInt32BE(id & 0xffffff, 4 + i * 8); // flags 0
    body.writeUInt32BE(value >>> 0, 8 + i * 8);
  });
  return control(FrameType.settings, 0, body);
}

/** A PING. */
export function pingFrame(id: number): Buffer {
  return control(FrameType.ping, 0, words(id));
}

/** A GOAWAY. */
export function goAwayFrame(lastGoodStreamId: number, status = 0): Buffer {
  return control(FrameType.goAway, 0, words(lastGoodStreamId & 0x7fffffff, status));
}

/** A WINDOW_UPDATE (stream 0 updates the connection window). */
export function windowUpdateFrame(streamId: number, delta: number): Buffer {
  return control(FrameType.windowUpdate, 0, words(streamId & 0x7fffffff, delta & 0x7fffffff));
}

/** Reads a 31-bit stream id at `offset`. */
export function streamIdAt(payload: Buffer, offset = 0): number {
  return payload.readUInt32BE(offset) & 0x7fffffff;
}
