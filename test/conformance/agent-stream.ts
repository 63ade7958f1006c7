/**
 * The agent stream as protobuf messages, on top of the raw gRPC call ({@link openRawCall}): what a scripted test and the
 * mini agent both send and read. It encodes `ConnectRequest`s with the generated schema, decodes every
 * `ConnectResponse`, keeps them all (heartbeats included) and exposes how the call ended on the wire — so a test can
 * send anything the page forbids and check the exact status, trailer and response form.
 */
import { create, fromBinary, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import {
  ConnectRequestSchema,
  ConnectResponseSchema,
  type ConnectResponse,
  type Welcome,
} from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { openRawCall, type CallOutcome, type RawCall, type RawCallOptions } from './grpc-wire.js';

/** The `message` oneof of a ConnectRequest, as plain init data. */
export type RequestMessage = MessageInitShape<typeof ConnectRequestSchema>['message'];

/** Options of {@link openAgentStream}. */
export interface AgentStreamOptions extends RawCallOptions {
  /** `authorization: Bearer <bearer>`. */
  bearer?: string;
}

/** One agent stream driven message by message. */
export interface AgentStream {
  /** Encodes and sends one ConnectRequest. */
  send(message: RequestMessage): void;
  /** The raw call underneath (broken frames, compression flags). */
  readonly raw: RawCall;
  /** The next response that is not a Heartbeat; throws when the call ends first or nothing comes in `timeoutMs`. */
  next(timeoutMs?: number): Promise<ConnectResponse>;
  /** The next non-heartbeat response of a given case, skipping others (kept in {@link received}). */
  nextOf<C extends NonNullable<ConnectResponse['message']['case']>>(
    kind: C,
    timeoutMs?: number,
  ): Promise<Extract<ConnectResponse['message'], { case: C }>['value']>;
  /** Waits until an Ack of at least `sequence` arrived. */
  waitForAck(sequence: number | bigint, timeoutMs?: number): Promise<void>;
  /** Every response received so far, heartbeats included, in order. */
  readonly received: ConnectResponse[];
  /** The highest acknowledged sequence so far. */
  readonly acked: bigint;
  /** How the call ended. */
  readonly ended: Promise<CallOutcome>;
  readonly finished: boolean;
  /** Sends a Heartbeat every `ms` until the call ends: an agent that is alive with nothing else to say. */
  keepAlive(agentId: string, ms?: number): void;
  end(): void;
  abort(): void;
}

/** Encodes one ConnectRequest (for raw framing tricks). */
export function encodeRequest(message: RequestMessage): Uint8Array {
  return toBinary(ConnectRequestSchema, create(ConnectRequestSchema, { message } as MessageInitShape<typeof ConnectRequestSchema>));
}

/** Opens `AgentService.Connect` with a raw HTTP/2 client and starts reading responses. */
export function openAgentStream(grpcUrl: string, options: AgentStreamOptions = {}): AgentStream {
  const headers = { ...(options.bearer ? { authorization: `Bearer ${options.bearer}` } : {}), ...options.headers };
  const raw = openRawCall(grpcUrl, { ...options, headers });
  const received: ConnectResponse[] = [];
  const queue: ConnectResponse[] = [];
  let acked = 0n;
  const waiters = new Set<() => void>();
  let pumpDone = false;
  const wake = () => {
    for (const w of [...waiters]) w();
    waiters.clear();
  };
  /** Waits for the next response (or the end), at most `ms`. */
  const pause = (ms: number) =>
    new Promise<void>((r) => {
      const t = setTimeout(() => {
        waiters.delete(r);
        r();
      }, ms);
      t.unref();
      waiters.add(r);
    });
  void (async () => {
    for (;;) {
      let bytes: Uint8Array | undefined;
      try {
        bytes = await raw.read(3_600_000);
      } catch {
        bytes = undefined;
      }
      if (!bytes) break;
      const res = fromBinary(ConnectResponseSchema, bytes);
      received.push(res);
      if (res.message.case === 'ack' && res.message.value.sequence > acked) acked = res.message.value.sequence;
      if (res.message.case !== 'heartbeat') queue.push(res);
      wake();
    }
    pumpDone = true;
    wake();
  })();

  const next = async (timeoutMs = 30_000): Promise<ConnectResponse> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = queue.shift();
      if (m) return m;
      if (pumpDone) {
        const o = await raw.ended;
        throw new Error(`the stream ended (grpc-status ${o.grpcStatus} "${o.grpcMessage}") before the next response`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response within ${timeoutMs} ms`);
      await pause(left);
    }
  };
  return {
    send(message) {
      raw.writeMessage(encodeRequest(message));
    },
    raw,
    next,
    async nextOf(kind, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = await next(Math.max(1, deadline - Date.now()));
        if (m.message.case === kind) return m.message.value as never;
      }
    },
    async waitForAck(sequence, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (acked < BigInt(sequence)) {
        if (pumpDone) {
          const o = await raw.ended;
          throw new Error(`the stream ended (grpc-status ${o.grpcStatus} "${o.grpcMessage}") before ack ${sequence}`);
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ack of ${sequence} within ${timeoutMs} ms (acked ${acked})`);
        await pause(left);
      }
    },
    received,
    get acked() {
      return acked;
    },
    ended: raw.ended,
    get finished() {
      return raw.finished;
    },
    keepAlive(agentId, ms = 300) {
      if (raw.finished) return;
      const timer = setInterval(
        () => raw.writeMessage(encodeRequest({ case: 'heartbeat', value: { agentId, sentAtUnixMs: BigInt(Date.now()) } })),
        ms,
      );
      timer.unref();
      void raw.ended.then(() => clearInterval(timer));
    },
    end: () => raw.end(),
    abort: () => raw.abort(),
  };
}

/** Sends a Hello and returns the Welcome (throws with the stream's status when it ends instead). */
export async function helloAndWelcome(stream: AgentStream, hello: RequestMessage, timeoutMs = 30_000): Promise<Welcome> {
  stream.send(hello);
  const res = await stream.next(timeoutMs);
  if (res.message.case !== 'welcome') throw new Error(`expected a Welcome, got ${res.message.case}`);
  return res.message.value;
}
