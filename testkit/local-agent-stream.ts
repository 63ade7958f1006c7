/**
 * An agent stream served in the test process by the session code itself (`serveAgentStream`), with no transport in
 * between: for tests of what the session records about a transport the testkit has no client for (the stream names
 * any {@link AgentTransport}). It runs beside a gateway from ./test-gateway.ts on that gateway's database, with its
 * own registry (this replica's live streams do not see it, nor does its lease keeper: leases last
 * {@link LOCAL_LEASE_SECONDS}). It is driven like ./test-agent-stream.ts's streams, so `connectAgent` and the message
 * builders work with it.
 */
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { ConnectRequestSchema, type ConnectRequest } from '../src/gen/outpost/agent/v1/agent_pb.js';
import type { Database } from '../src/db/database.js';
import { serveAgentStream, type AgentSessionDeps } from '../src/gateway/agents/agent-session.js';
import { createAgentSessionStore } from '../src/gateway/agents/agent-session-store.js';
import type { AgentTransport } from '../src/gateway/agents/agent-transport.js';
import { createSessionRegistry } from '../src/gateway/agents/session-registry.js';
import { insecurePrincipal, type Principal } from '../src/gateway/auth/principal.js';
import { createObjectWriter } from '../src/gateway/cache/object-writer.js';
import { createSyncState } from '../src/gateway/cache/sync-state.js';
import { createSilentLogger } from '../src/shared/logger.js';
import { readResponses, type TestAgentStream } from './test-agent-stream.js';

/** Length of the account leases local streams take: longer than any test, as no lease keeper renews them. */
const LOCAL_LEASE_SECONDS = 600;

/** Where a local stream runs. */
export interface LocalStreamOptions {
  /** The gateway's database (`TestGateway.gateway.database`). */
  database: Database;
  /** Recorded as the session's replica. */
  gatewayId: string;
  transport: AgentTransport;
  /** The stream's principal; insecure mode's (every role, every account) when absent. */
  principal?: Principal;
}

/** Session dependencies of local streams on `database`: silent, a fresh registry, no operations. */
function localSessionDeps(database: Database, gatewayId: string): AgentSessionDeps {
  return {
    gatewayId,
    heartbeatIntervalSeconds: 5,
    deadAfterSeconds: 120,
    maxUnacked: 64,
    resumeMaxAgeSeconds: 3600,
    leaseSeconds: LOCAL_LEASE_SECONDS,
    registry: createSessionRegistry(),
    db: database.db,
    objectWriter: createObjectWriter(database),
    syncState: createSyncState(database),
    logger: createSilentLogger(),
    sessionStore: createAgentSessionStore(database),
  };
}

/** Opens a stream served by `serveAgentStream(…, options.transport)`; end or abort it before the gateway closes. */
export function openLocalAgentStream(options: LocalStreamOptions): TestAgentStream {
  const deps = localSessionDeps(options.database, options.gatewayId);
  const requests = createRequestQueue();
  const responses = serveAgentStream(requests, deps, options.principal ?? insecurePrincipal(), options.transport);
  const reader = readResponses(responses, () => requests.close());
  return {
    send: (message) => requests.push(create(ConnectRequestSchema, { message } as MessageInitShape<typeof ConnectRequestSchema>)),
    end: () => requests.close(),
    ...reader,
    // The agent going away: the session's request side fails, as a transport's does when its peer vanishes.
    abort: () => requests.fail(new ConnectError('the agent went away', Code.Canceled)),
  };
}

/** The request side: messages the test pushes, then the end (or a failure). */
interface RequestQueue extends AsyncIterableIterator<ConnectRequest> {
  push(message: ConnectRequest): void;
  close(): void;
  fail(error: ConnectError): void;
}

function createRequestQueue(): RequestQueue {
  const pending: ConnectRequest[] = [];
  let closed = false;
  let error: ConnectError | undefined;
  let wake: (() => void) | undefined;
  const signal = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const queue: RequestQueue = {
    push(message) {
      if (closed) return;
      pending.push(message);
      signal();
    },
    close() {
      closed = true;
      signal();
    },
    fail(err) {
      error ??= err;
      closed = true;
      signal();
    },
    async next() {
      for (;;) {
        if (error) throw error;
        const m = pending.shift();
        if (m) return { value: m, done: false };
        if (closed) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    async return() {
      queue.close();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => queue,
  };
  return queue;
}
