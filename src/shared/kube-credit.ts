/**
 * Credit-based flow control for the bodies of proxied Kubernetes API requests (docs/agent-protocol.md, "Kubernetes
 * API requests"): both sides of the agent stream use it in both directions. A sender never sends more body bytes than
 * the receiver granted; the receiver grants bytes back once it delivered them onwards (to the caller's connection on
 * the gateway, to the cluster's on the agent). So each request holds at most its window in the other side's memory,
 * and a slow reader pauses only its own source — never the shared stream, its cache traffic or other requests.
 */
import type { Readable } from 'node:stream';

/** Credit each side grants a request at its start (bytes). */
export const KUBE_WINDOW_BYTES = 256 * 1024;
/** Largest body chunk in one message. */
const KUBE_CHUNK_BYTES = 32 * 1024;

/** What {@link pumpWithCredit} calls. */
export interface CreditPumpSink {
  /** Sends one chunk (never longer than the credit left). */
  send(chunk: Uint8Array): void;
  /** The source ended cleanly and every byte was sent. */
  end(): void;
  /** The source failed or closed before its end. */
  fail(err: Error): void;
}

/** Controls a running pump. */
export interface CreditPump {
  /** The peer granted more credit: sends what waits and resumes the source. */
  grant(bytes: number): void;
  /** Stops reading (the request ended another way); nothing more is sent. */
  stop(): void;
}

/**
 * Reads `source` and sends it in chunks of at most `maxChunk` bytes while credit lasts, pausing the source when it
 * runs out. Starts with `credit` bytes (0: wait for the first grant). Exactly one of `end` and `fail` is called, once,
 * unless {@link CreditPump.stop} came first.
 */
export function pumpWithCredit(source: Readable, credit: number, sink: CreditPumpSink, maxChunk = KUBE_CHUNK_BYTES): CreditPump {
  const pending: Buffer[] = [];
  let ended = false;
  let finished = false;

  const finish = (err?: Error) => {
    if (finished) return;
    finished = true;
    source.off('data', onData);
    source.off('end', onEnd);
    source.off('error', onError);
    source.off('close', onClose);
    if (err) sink.fail(err);
    else sink.end();
  };

  const flush = () => {
    while (!finished && credit > 0 && pending.length > 0) {
      const head = pending[0]!;
      const size = Math.min(credit, maxChunk, head.length);
      const chunk = size === head.length ? head : head.subarray(0, size);
      if (size === head.length) pending.shift();
      else pending[0] = head.subarray(size);
      credit -= size;
      sink.send(chunk);
    }
    if (finished) return;
    if (pending.length === 0 && ended) finish();
    else if (pending.length > 0 || credit <= 0) source.pause();
    else source.resume();
  };

  const onData = (chunk: Buffer | string) => {
    pending.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    flush();
  };
  const onEnd = () => {
    ended = true;
    flush();
  };
  const onError = (err: Error) => finish(err);
  const onClose = () => {
    if (!ended) finish(new Error('the connection closed before its end'));
  };
  source.on('data', onData);
  source.on('end', onEnd);
  source.on('error', onError);
  source.on('close', onClose);
  flush();
  return {
    grant(bytes) {
      if (finished || bytes <= 0) return;
      credit += bytes;
      flush();
    },
    stop() {
      finished = true;
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
    },
  };
}

/** The receiving side of one direction of a request's body. */
export interface CreditReceiver {
  /** Accounts for a received chunk; false when the peer sent more than it was granted (a protocol violation). */
  received(bytes: number): boolean;
  /** The bytes were delivered onwards: grants them back (batched, so grants do not flood the stream). */
  delivered(bytes: number): void;
}

/**
 * Tracks the credit granted to the peer. `grant` sends a window message; it is called once a quarter of the window was
 * delivered, so the peer never waits on a grant while the receiver has room.
 */
export function createCreditReceiver(window: number, grant: (bytes: number) => void): CreditReceiver {
  let outstanding = window;
  let toGrant = 0;
  return {
    received(bytes) {
      outstanding -= bytes;
      return outstanding >= 0;
    },
    delivered(bytes) {
      toGrant += bytes;
      if (toGrant < window / 4) return;
      outstanding += toGrant;
      const granted = toGrant;
      toGrant = 0;
      grant(granted);
    },
  };
}
