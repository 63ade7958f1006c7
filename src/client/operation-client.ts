/**
 * The thin Connect client every operation command shares: one transport to the gateway's HTTP port (Connect protocol
 * over HTTP/1.1, the same path a browser takes), submit-and-wait with a client-side deadline, and a fallback to
 * WaitOperation when the gateway hands back an operation that is not terminal yet.
 */
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import {
  OperationService,
  OperationState,
  SubmitOperationRequestSchema,
  type OperationRecord,
} from '../gen/outpost/api/v1/operation_service_pb.js';
import { CliError, ExitCode } from './errors.js';
import { createGatewayTransport, type GatewayTarget } from './gateway-transport.js';

/** Default gateway URL: `OUTPOST_GATEWAY` or the gateway's default HTTP port on this host. */
export function defaultGatewayUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.OUTPOST_GATEWAY || 'http://127.0.0.1:7002';
}

/** The operation's default end-to-end timeout (the gateway's default too). */
export const DEFAULT_OPERATION_TIMEOUT_MS = 30_000;

/** How much longer than the operation's own timeout the client waits for the gateway to answer. */
const CLIENT_GRACE_MS = 10_000;

/** Fields of a SubmitOperationRequest (account, id, timeout, spec); any `wait` given is overridden by the client. */
export type SubmitInit = MessageInitShape<typeof SubmitOperationRequestSchema>;

/** A client bound to one gateway. */
export interface OperationClient {
  readonly gatewayUrl: string;
  /** The raw generated client (GetOperation, ListOperations…). */
  readonly raw: Client<typeof OperationService>;
  /** Submits without waiting; resolves with the stored (PENDING/SENT or already terminal) record. */
  submit(request: SubmitInit): Promise<OperationRecord>;
  /**
   * Submits with `wait: true` and resolves with the TERMINAL record. Waits at most the operation's timeout (default
   * 30 s) plus a grace period; if the gateway still has not finished by then, rejects with a CliError (exit 1).
   */
  submitAndWait(request: SubmitInit): Promise<OperationRecord>;
  /** Streams WaitOperation until the record is terminal (bounded by `deadlineMs` from now). */
  waitFor(id: string, deadlineMs: number): Promise<OperationRecord>;
}

/** True for SUCCEEDED, FAILED and TIMED_OUT. */
export function isTerminal(state: OperationState): boolean {
  return state === OperationState.SUCCEEDED || state === OperationState.FAILED || state === OperationState.TIMED_OUT;
}

/** Options for {@link createOperationClient}: the gateway's HTTP (Connect) URL, its token and TLS settings. */
export interface OperationClientOptions extends GatewayTarget {
  /** Binary protobuf instead of JSON on the wire (default false: Connect JSON, what curl and browsers send). */
  binary?: boolean;
}

/** Creates a client for `options.gatewayUrl`. Throws CliError (exit 2) for a URL that is not http(s). */
export function createOperationClient(options: OperationClientOptions): OperationClient {
  const { gatewayUrl, transport } = createGatewayTransport(options, options.binary);
  const raw = createClient(OperationService, transport);

  const budgetMs = (request: SubmitInit) => {
    const t = request.timeout;
    const ms = t ? Number(t.seconds ?? 0n) * 1000 + (t.nanos ?? 0) / 1e6 : DEFAULT_OPERATION_TIMEOUT_MS;
    return Math.max(ms, 0) + CLIENT_GRACE_MS;
  };

  const waitFor = async (id: string, deadlineMs: number): Promise<OperationRecord> => {
    let last: OperationRecord | undefined;
    // Our own deadline: connect's `timeoutMs` timer outlives a stream the caller leaves early and would keep the
    // process alive for the whole budget after the answer is printed.
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new ConnectError(`no terminal state for operation ${id} in time`, Code.DeadlineExceeded)),
      Math.max(deadlineMs, 1),
    );
    try {
      for await (const msg of raw.waitOperation({ id }, { signal: abort.signal })) {
        if (msg.operation) last = msg.operation;
        if (last && isTerminal(last.state)) return last;
      }
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
    // The stream ended without a terminal state: ask once more.
    const { operation } = await raw.getOperation({ id }, { timeoutMs: 5000 });
    if (operation && isTerminal(operation.state)) return operation;
    throw new CliError(`operation ${id} is still ${OperationState[(operation ?? last)?.state ?? 0]} after the wait ended`, ExitCode.FAILED);
  };

  return {
    gatewayUrl,
    raw,
    async submit(request) {
      const res = await raw.submitOperation(create(SubmitOperationRequestSchema, { ...request, wait: false }), { timeoutMs: 30_000 });
      if (!res.operation) throw new CliError('the gateway answered without an operation record', ExitCode.FAILED);
      return res.operation;
    },
    async submitAndWait(request) {
      const started = Date.now();
      const budget = budgetMs(request);
      const res = await raw.submitOperation(create(SubmitOperationRequestSchema, { ...request, wait: true }), { timeoutMs: budget });
      const record = res.operation;
      if (!record) throw new CliError('the gateway answered without an operation record', ExitCode.FAILED);
      if (isTerminal(record.state)) return record;
      return waitFor(record.id, budget - (Date.now() - started));
    },
    waitFor,
  };
}
