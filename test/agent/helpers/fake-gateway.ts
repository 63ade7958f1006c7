/**
 * A small in-process AgentService peer for agent tests: an HTTP/2 cleartext server on an ephemeral port that records
 * every message the agent sends and answers as the test wants (verdicts, resume points, window size, heartbeats,
 * automatic or withheld acks, dropped streams, session tokens, refused Hellos, AccountVerdicts for AccountsChanged,
 * pushed AccountVerdicts, AccountCommands).
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { ConnectError, Code, type ConnectRouter } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import {
  AccountCommandSchema,
  AccountVerdictSchema,
  AccountVerdictsSchema,
  AckSchema,
  AgentService,
  ConnectRequestSchema,
  ConnectResponseSchema,
  Verdict,
  WelcomeSchema,
  type AccountVerdict,
  type AccountsChanged,
  type ConnectRequest,
  type ConnectResponse,
  type Hello,
} from '../../../src/gen/outpost/agent/v1/agent_pb.js';
import { OperationSchema, type Operation, type OperationResult } from '../../../src/gen/outpost/agent/v1/operation_pb.js';
import { eventually } from '../../../testkit/eventually.js';

/** How the fake answers a Hello. */
interface WelcomePlan {
  verdicts?: (hello: Hello) => Array<Partial<Pick<AccountVerdict, 'verdict' | 'reason' | 'resume'>> & { account: string }>;
  heartbeatIntervalSeconds?: number;
  maxUnacked?: number;
  /** Session token of the Welcome (default `token-<stream index>`; '' sends none). */
  sessionToken?: string;
  /** End the stream with this error instead of a Welcome (e.g. UNAUTHENTICATED for a bad resume token). */
  refuse?: { code: Code; message: string };
}

/** How the fake answers an AccountsChanged (default: every added account CACHING, no resume points). */
type VerdictsPlan = (
  change: AccountsChanged,
  stream: number,
) => Array<Partial<Pick<AccountVerdict, 'verdict' | 'reason' | 'resume'>> & { account: string }> | undefined;

/** One agent stream as seen by the fake. */
interface RecordedStream {
  readonly index: number;
  readonly headers: Headers;
  readonly messages: ConnectRequest[];
  hello?: Hello;
  ended: boolean;
  /** Sends a response on this stream. */
  send(response: ConnectResponse): void;
  /** Fails the stream (the agent sees an error). */
  drop(): void;
}

/** Options of {@link startFakeGateway}. */
export interface FakeGatewayOptions {
  /** Called for every Hello (stream index starts at 0); default: every account CACHING, no resume points. */
  welcome?: (hello: Hello, stream: number) => WelcomePlan;
  /** Ack every data message as soon as it arrives (default true). */
  autoAck?: boolean;
  /** Answers AccountsChanged messages; returning undefined sends no AccountVerdicts. */
  verdicts?: VerdictsPlan;
  /** Never answer the Hello (to test dead-peer detection). */
  silent?: boolean;
  /** Serve TLS (HTTP/2 only) with this certificate; with `clientCaPem`, require a client certificate it signed. */
  tls?: { certPem: string; keyPem: string; clientCaPem?: string };
}

/** The running fake. */
export interface FakeGateway {
  /** `host:port` for `clouddriver.grpc`. */
  readonly address: string;
  readonly streams: RecordedStream[];
  /** Every message received on every stream, in order. */
  readonly messages: ConnectRequest[];
  autoAck: boolean;
  /** Common names of the client certificates presented over TLS. */
  readonly tlsClients: string[];
  /** Serialized bytes of every received message (what crossed the wire, re-encoded). */
  rawBytes(): Buffer;
  /** Sends an AccountCommand down a stream (default: the newest one). */
  sendAccountCommand(command: Parameters<typeof create<typeof AccountCommandSchema>>[1], stream?: RecordedStream): void;
  /**
   * Sends an AccountVerdicts down a stream (default: the newest one); `changeId` defaults to 0, a verdict update the
   * gateway pushes on its own. Each verdict defaults to CACHING.
   */
  sendVerdicts(
    verdicts: Array<Partial<Pick<AccountVerdict, 'verdict' | 'reason' | 'resume'>> & { account: string }>,
    options?: { changeId?: bigint; stream?: RecordedStream },
  ): void;
  /** Every AccountsChanged received, with the index of its stream. */
  accountsChanged(): Array<AccountsChanged & { streamIndex: number }>;
  /** Sends an operation down a stream (default: the newest one). */
  sendOperation(operation: Operation | Parameters<typeof create<typeof OperationSchema>>[1], stream?: RecordedStream): void;
  /** Every operation result received (on any stream), with the index of the stream it came on. */
  results(): Array<OperationResult & { streamIndex: number }>;
  /**
   * Resolves with the first result for `id` received after `after` results of that id (default 0); waits with
   * testkit's `eventually` (`timeoutMs` defaults to its generous bound).
   */
  waitForResult(id: string, timeoutMs?: number, after?: number): Promise<OperationResult & { streamIndex: number }>;
  close(): Promise<void>;
}

/** Data messages (batches and markers) of a list of requests. */
export function dataMessages(messages: ConnectRequest[]): ConnectRequest[] {
  return messages.filter((m) => m.message.case === 'events' || m.message.case === 'sync');
}

/** The sequence of a data message. */
export function sequenceOf(m: ConnectRequest): bigint {
  return m.message.case === 'events' || m.message.case === 'sync' ? m.message.value.sequence : 0n;
}

/** Starts the fake on 127.0.0.1 and an ephemeral port. */
export async function startFakeGateway(options: FakeGatewayOptions = {}): Promise<FakeGateway> {
  const streams: RecordedStream[] = [];
  const messages: ConnectRequest[] = [];
  const state = { autoAck: options.autoAck ?? true };

  const routes = (router: ConnectRouter) =>
    router.service(AgentService, {
      async *connect(requests, ctx) {
        const queue: ConnectResponse[] = [];
        let wake: (() => void) | undefined;
        let failure: Error | undefined;
        let done = false;
        const stream: RecordedStream = {
          index: streams.length,
          headers: ctx.requestHeader,
          messages: [],
          ended: false,
          send(response) {
            queue.push(response);
            wake?.();
          },
          drop() {
            failure = new ConnectError('dropped by the test', Code.Unavailable);
            wake?.();
          },
        };
        streams.push(stream);
        void (async () => {
          try {
            for await (const request of requests) {
              stream.messages.push(request);
              messages.push(request);
              const m = request.message;
              if (m.case === 'hello') {
                stream.hello = m.value;
                if (options.silent) continue;
                const plan = options.welcome?.(m.value, stream.index) ?? {};
                if (plan.refuse) {
                  failure = new ConnectError(plan.refuse.message, plan.refuse.code);
                  wake?.();
                  continue;
                }
                const verdicts = plan.verdicts?.(m.value) ?? m.value.accounts.map((a) => ({ account: a.name }));
                stream.send(
                  create(ConnectResponseSchema, {
                    message: {
                      case: 'welcome',
                      value: create(WelcomeSchema, {
                        sessionId: `session-${stream.index}`,
                        gatewayId: 'fake',
                        heartbeatIntervalSeconds: plan.heartbeatIntervalSeconds ?? 0,
                        maxUnacked: plan.maxUnacked ?? 64,
                        sessionToken: plan.sessionToken ?? `token-${stream.index}`,
                        accounts: verdicts.map((v) => create(AccountVerdictSchema, { verdict: Verdict.CACHING, ...v })),
                      }),
                    },
                  }),
                );
              } else if (m.case === 'accountsChanged') {
                const planned = options.verdicts
                  ? options.verdicts(m.value, stream.index)
                  : m.value.added.map((a) => ({ account: a.name }));
                if (planned === undefined) continue;
                stream.send(
                  create(ConnectResponseSchema, {
                    message: {
                      case: 'verdicts',
                      value: create(AccountVerdictsSchema, {
                        changeId: m.value.changeId,
                        accounts: planned.map((v) => create(AccountVerdictSchema, { verdict: Verdict.CACHING, ...v })),
                      }),
                    },
                  }),
                );
              } else if ((m.case === 'events' || m.case === 'sync') && state.autoAck) {
                stream.send(
                  create(ConnectResponseSchema, { message: { case: 'ack', value: create(AckSchema, { sequence: m.value.sequence }) } }),
                );
              }
            }
          } catch {
            // the stream failed; the loop below ends it
          } finally {
            done = true;
            wake?.();
          }
        })();
        try {
          for (;;) {
            while (queue.length > 0) yield queue.shift()!;
            if (failure) throw failure;
            if (done || ctx.signal.aborted) return;
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
          }
        } finally {
          stream.ended = true;
        }
      },
    });

  const results = () =>
    streams.flatMap((s) =>
      s.messages.flatMap((m) => (m.message.case === 'operationResult' ? [Object.assign(m.message.value, { streamIndex: s.index })] : [])),
    );

  const handler = connectNodeAdapter({ routes });
  const tls = options.tls;
  const server = tls
    ? http2.createSecureServer(
        {
          cert: tls.certPem,
          key: tls.keyPem,
          ...(tls.clientCaPem ? { ca: tls.clientCaPem, requestCert: true, rejectUnauthorized: true } : {}),
        },
        handler,
      )
    : http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  const tlsClients: string[] = [];
  server.on('secureConnection', (socket) => {
    const peer = (socket as import('node:tls').TLSSocket).getPeerCertificate();
    if (peer?.subject?.CN) tlsClients.push(String(peer.subject.CN));
  });
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    address: `127.0.0.1:${port}`,
    streams,
    messages,
    tlsClients,
    get autoAck() {
      return state.autoAck;
    },
    set autoAck(value: boolean) {
      state.autoAck = value;
    },
    rawBytes: () => Buffer.concat(messages.map((m) => Buffer.from(toBinary(ConnectRequestSchema, m)))),
    sendAccountCommand(command, stream) {
      const target = stream ?? streams[streams.length - 1];
      if (!target) throw new Error('no agent stream yet');
      target.send(create(ConnectResponseSchema, { message: { case: 'accountCommand', value: create(AccountCommandSchema, command) } }));
    },
    sendVerdicts(verdicts, options = {}) {
      const target = options.stream ?? streams[streams.length - 1];
      if (!target) throw new Error('no agent stream yet');
      const value = create(AccountVerdictsSchema, {
        changeId: options.changeId ?? 0n,
        accounts: verdicts.map((v) => create(AccountVerdictSchema, { verdict: Verdict.CACHING, ...v })),
      });
      target.send(create(ConnectResponseSchema, { message: { case: 'verdicts', value } }));
    },
    accountsChanged: () =>
      streams.flatMap((s) =>
        s.messages.flatMap((m) => (m.message.case === 'accountsChanged' ? [Object.assign(m.message.value, { streamIndex: s.index })] : [])),
      ),
    sendOperation(operation, stream) {
      const target = stream ?? streams[streams.length - 1];
      if (!target) throw new Error('no agent stream yet');
      const value =
        '$typeName' in (operation as object)
          ? (operation as Operation)
          : create(OperationSchema, operation as Parameters<typeof create<typeof OperationSchema>>[1]);
      target.send(create(ConnectResponseSchema, { message: { case: 'operation', value } }));
    },
    results: () => results(),
    waitForResult(id, timeoutMs, after = 0) {
      return eventually(`the result of operation ${id}`, () => results().filter((r) => r.id === id)[after], { timeoutMs });
    },
    async close() {
      for (const s of streams) s.drop();
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
