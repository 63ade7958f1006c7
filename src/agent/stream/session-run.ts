/**
 * The state of one running session (session.ts), as one typed record that its steps share: what it was started with,
 * and everything that changes while it runs (the Welcome, the outbox, the accounts waiting for verdicts, the timers,
 * the watchers to wait for, why it ends). Each step reads and changes the record it is given; nothing else holds
 * session state, and nothing of it outlives the session except what it writes to the shared {@link SessionState}.
 */
import { create } from '@bufbuild/protobuf';
import { ConnectRequestSchema, type ConnectRequest } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { AccountRuntime } from '../accounts/account-runtime.js';
import type { Outbox } from './outbox.js';
import type { Pushable } from './pushable.js';
import type { SessionOptions, SessionState } from './session.js';

/** One running session. Created by {@link createSessionRun}; changed only by the session's own steps. */
export interface SessionRun {
  readonly options: SessionOptions;
  /** The state shared with the status, the account manager and the next sessions (`options.state`). */
  readonly state: SessionState;
  /** Aborted when the session ends or must end (dead peer, same replica); every account's watchers listen on it. */
  readonly controller: AbortController;
  /** The request side of the stream: Hello, heartbeats, reports, results, AccountsChanged, and the outbox's data. */
  readonly requests: Pushable<ConnectRequest>;
  /** The session the Hello resumes (the shared state's `resume` when the session started). */
  readonly resumed: { sessionId: string; token: string } | undefined;
  /** The accounts the Hello announced; the Welcome's verdicts are for them. */
  readonly helloAccounts: ReadonlySet<AccountRuntime>;

  // What changes while the session runs.
  /** Accounts the gateway knows in this session (from the Hello or an AccountsChanged). */
  readonly known: Set<AccountRuntime>;
  /** Accounts of each unanswered AccountsChanged, by change_id. */
  readonly awaitingVerdicts: Map<bigint, AccountRuntime[]>;
  /** Announcements made before the Welcome, sent just after it. */
  readonly beforeWelcome: Array<{ removed: string[]; added: AccountRuntime[] }>;
  /** What was last reported per account in this session (an unchanged report is not sent again). */
  readonly reported: Map<AccountRuntime, string>;
  /** The session's intervals: heartbeats, the dead-peer check, progress reports. Cleared when it ends. */
  readonly timers: NodeJS.Timeout[];
  /** Every watcher run the session started or stopped: all have returned before the session ends. */
  readonly watchers: Promise<void>[];
  /** The data outbox, from the Welcome on. */
  outbox: Outbox | undefined;
  /** True once the Welcome arrived. */
  welcomed: boolean;
  /** Why the gateway is treated as dead (set by the dead-peer check, which aborts the session). */
  deadPeer: string | undefined;
  /** The replica of a Welcome the session ended for, to reach another one ({@link SessionOptions.sameReplica}). */
  sameReplica: string | undefined;
  /** `Date.now()` of the last message from the gateway. */
  lastReceived: number;
  /** The heartbeat interval in force: the options' until the Welcome gives one. */
  heartbeatSeconds: number;
}

/** Creates the record of a session about to start, on its request side and its controller. */
export function createSessionRun(options: SessionOptions, requests: Pushable<ConnectRequest>, controller: AbortController): SessionRun {
  const { state } = options;
  return {
    options,
    state,
    controller,
    requests,
    resumed: state.resume,
    helloAccounts: new Set(state.accounts),
    known: new Set(state.accounts),
    awaitingVerdicts: new Map(),
    beforeWelcome: [],
    reported: new Map(),
    timers: [],
    watchers: [],
    outbox: undefined,
    welcomed: false,
    deadPeer: undefined,
    sameReplica: undefined,
    lastReceived: Date.now(),
    heartbeatSeconds: options.heartbeatSeconds,
  };
}

/** Queues one request on the session's stream (dropped once the stream's requests ended). */
export function send(run: SessionRun, message: ConnectRequest['message']): void {
  run.requests.push(create(ConnectRequestSchema, { message }));
}
