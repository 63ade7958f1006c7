/**
 * The server side of one SPDY/3.1 connection: streams the client opens (odd ids), SYN_REPLY, DATA both ways with
 * FIN half-closes, RST_STREAM, PING echo, SETTINGS, GOAWAY, HEADERS and WINDOW_UPDATE. Bytes in come through
 * {@link SpdyServerSession.receive}; bytes out go to the `send` callback, one Buffer per frame.
 *
 * Flow control: SPDY/3.1 windows (64 KiB per stream and per connection) are kept for a peer that takes part in flow
 * control, i.e. once it sends a WINDOW_UPDATE or an initial-window SETTINGS. Go's spdystream (kubectl's SPDY) never
 * does either and never limits what it receives, so for it the sandbox sends freely and grants no windows.
 */
import { EventEmitter } from 'node:events';
import {
  dataFrame,
  FLAG_FIN,
  type Frame,
  FrameParser,
  FrameType,
  goAwayFrame,
  MAX_DATA_PAYLOAD,
  pingFrame,
  RstStatus,
  rstStreamFrame,
  SETTINGS_INITIAL_WINDOW_SIZE,
  streamIdAt,
  synReplyFrame,
  windowUpdateFrame,
} from './frames.js';
import { HeaderCompressor, HeaderDecompressor, type SpdyHeaders } from './header-codec.js';

/** The default SPDY/3.1 window, per stream and per connection. */
const DEFAULT_WINDOW = 64 * 1024;

/** A stream the peer opened. Events: `data` (Buffer), `end` (peer half-closed), `close` (fully closed or reset). */
export class SpdyStream extends EventEmitter {
  remoteFinished = false;
  localFinished = false;
  closed = false;
  /** What the peer may still send us / we may still send it (only enforced with a flow-controlling peer). */
  recvWindow: number;
  sendWindow: number;
  readonly pending: { data: Buffer; fin: boolean }[] = [];

  constructor(
    private readonly session: SpdyServerSession,
    readonly id: number,
    readonly headers: SpdyHeaders,
    window: number,
  ) {
    super();
    this.recvWindow = DEFAULT_WINDOW;
    this.sendWindow = window;
  }

  /** Accepts the stream (SYN_REPLY); a stream must be replied to before data is written. */
  reply(headers: SpdyHeaders = {}): void {
    this.session.sendReply(this, headers);
  }

  /** Writes data to the peer (split into frames; queued while a flow-controlling peer's window is shut). */
  write(data: Buffer): void {
    if (this.localFinished || this.closed) return;
    this.session.sendData(this, data, false);
  }

  /** Half-closes our side (DATA with FIN). */
  end(): void {
    if (this.localFinished || this.closed) return;
    this.localFinished = true;
    this.session.sendData(this, Buffer.alloc(0), true);
    this.session.maybeRemove(this);
  }

  /** Resets the stream (RST_STREAM). */
  reset(status: number = RstStatus.cancel): void {
    if (this.closed) return;
    this.session.sendReset(this, status);
  }
}

/** Server side of one SPDY/3.1 connection. Emits `stream` (SpdyStream), `goaway`, `error` (protocol errors). */
export class SpdyServerSession extends EventEmitter {
  private readonly parser = new FrameParser();
  private readonly compressor = new HeaderCompressor();
  private readonly decompressor = new HeaderDecompressor();
  private readonly streams = new Map<number, SpdyStream>();
  private lastStreamId = 0;
  private flowControl = false;
  private initialWindow = DEFAULT_WINDOW;
  private sessionSendWindow = DEFAULT_WINDOW;
  private sessionRecvConsumed = 0;
  private closed = false;

  constructor(private readonly send: (frame: Buffer) => void) {
    super();
  }

  /** Streams currently open. */
  get openStreams(): number {
    return this.streams.size;
  }

  /** Feeds bytes from the transport. Protocol errors end the session with GOAWAY and an `error` event. */
  receive(chunk: Buffer): void {
    if (this.closed) return;
    try {
      for (const frame of this.parser.push(chunk)) this.handle(frame);
    } catch (err) {
      this.emit('error', err);
      this.close(1);
    }
  }

  /** Sends GOAWAY and closes every stream. Idempotent. */
  close(status = 0): void {
    if (this.closed) return;
    this.send(goAwayFrame(this.lastStreamId, status));
    this.closed = true;
    for (const stream of [...this.streams.values()]) this.finish(stream);
  }

  private handle(frame: Frame): void {
    if (frame.kind === 'data') return this.onData(frame.streamId, frame.flags, frame.data);
    const p = frame.payload;
    switch (frame.type) {
      case FrameType.synStream: {
        const id = streamIdAt(p, 0);
        const headers = this.decompressor.decompress(p.subarray(10));
        if (id % 2 === 0 || id <= this.lastStreamId) {
          this.send(rstStreamFrame(id, RstStatus.protocolError));
          return;
        }
        this.lastStreamId = id;
        const stream = new SpdyStream(this, id, headers, this.initialWindow);
        this.streams.set(id, stream);
        if (frame.flags & FLAG_FIN) stream.remoteFinished = true;
        this.emit('stream', stream);
        if (stream.remoteFinished) stream.emit('end');
        return;
      }
      case FrameType.synReply:
      case FrameType.headers:
        this.decompressor.decompress(p.subarray(4)); // keeps the compression context in step
        return;
      case FrameType.rstStream: {
        const stream = this.streams.get(streamIdAt(p, 0));
        if (stream) this.finish(stream);
        return;
      }
      case FrameType.settings:
        return this.onSettings(p);
      case FrameType.ping:
        if (p.readUInt32BE(0) % 2 === 1) this.send(pingFrame(p.readUInt32BE(0))); // client pings are odd
        return;
      case FrameType.goAway:
        this.emit('goaway');
        return;
      case FrameType.windowUpdate:
        return this.onWindowUpdate(streamIdAt(p, 0), p.readUInt32BE(4) & 0x7fffffff);
      default:
        return; // unknown control frames are ignored, as SPDY/3 asks
    }
  }

  private onData(id: number, flags: number, data: Buffer): void {
    const stream = this.streams.get(id);
    if (!stream || stream.remoteFinished) {
      this.send(rstStreamFrame(id, RstStatus.invalidStream));
      return;
    }
    if (data.length > 0) {
      if (this.flowControl) this.grant(stream, data.length);
      stream.emit('data', data);
    }
    if (flags & FLAG_FIN) {
      stream.remoteFinished = true;
      stream.emit('end');
      this.maybeRemove(stream);
    }
  }

  /** Gives a flow-controlling peer its window back once half of it is used. */
  private grant(stream: SpdyStream, length: number): void {
    stream.recvWindow -= length;
    if (stream.recvWindow <= DEFAULT_WINDOW / 2) {
      this.send(windowUpdateFrame(stream.id, DEFAULT_WINDOW - stream.recvWindow));
      stream.recvWindow = DEFAULT_WINDOW;
    }
    this.sessionRecvConsumed += length;
    if (this.sessionRecvConsumed >= DEFAULT_WINDOW / 2) {
      this.send(windowUpdateFrame(0, this.sessionRecvConsumed));
      this.sessionRecvConsumed = 0;
    }
  }

  private onSettings(p: Buffer): void {
    const count = p.readUInt32BE(0);
    for (let i = 0; i < count && 4 + i * 8 + 8 <= p.length; i++) {
      const id = p.readUInt32BE(4 + i * 8) & 0xffffff;
      const value = p.readUInt32BE(8 + i * 8);
      if (id !== SETTINGS_INITIAL_WINDOW_SIZE) continue;
      this.flowControl = true;
      for (const s of this.streams.values()) s.sendWindow += value - this.initialWindow;
      this.initialWindow = value;
    }
    this.flush();
  }

  private onWindowUpdate(id: number, delta: number): void {
    this.flowControl = true;
    if (id === 0) this.sessionSendWindow += delta;
    else {
      const stream = this.streams.get(id);
      if (stream) stream.sendWindow += delta;
    }
    this.flush();
  }

  /** @internal */
  sendReply(stream: SpdyStream, headers: SpdyHeaders): void {
    if (this.closed || stream.closed) return;
    this.send(synReplyFrame(stream.id, this.compressor.compress(headers)));
  }

  /** @internal */
  sendData(stream: SpdyStream, data: Buffer, fin: boolean): void {
    if (this.closed) return;
    stream.pending.push({ data, fin });
    this.flushStream(stream);
  }

  /** @internal */
  sendReset(stream: SpdyStream, status: number): void {
    if (!this.closed) this.send(rstStreamFrame(stream.id, status));
    this.finish(stream);
  }

  /** @internal Removes a stream once both sides are finished. */
  maybeRemove(stream: SpdyStream): void {
    if (stream.localFinished && stream.remoteFinished && stream.pending.length === 0) this.finish(stream);
  }

  private flush(): void {
    for (const stream of [...this.streams.values()]) this.flushStream(stream);
  }

  private flushStream(stream: SpdyStream): void {
    while (stream.pending.length > 0 && !stream.closed) {
      const item = stream.pending[0]!;
      let room = Math.min(item.data.length, MAX_DATA_PAYLOAD);
      if (this.flowControl) room = Math.min(room, stream.sendWindow, this.sessionSendWindow);
      if (room <= 0 && item.data.length > 0) return; // wait for WINDOW_UPDATE
      const chunk = item.data.subarray(0, room);
      const last = chunk.length === item.data.length;
      this.send(dataFrame(stream.id, chunk, last && item.fin));
      stream.sendWindow -= chunk.length;
      this.sessionSendWindow -= chunk.length;
      if (last) stream.pending.shift();
      else item.data = item.data.subarray(room);
    }
    this.maybeRemove(stream);
  }

  private finish(stream: SpdyStream): void {
    if (stream.closed) return;
    stream.closed = true;
    this.streams.delete(stream.id);
    stream.emit('close');
  }
}
