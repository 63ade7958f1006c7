/**
 * The state of one agent stream that its message handlers (Hello → Welcome, AccountsChanged, the write pipeline)
 * share. The stream (agent-session.ts) owns it; handlers change it only from the stream's request loop, one message
 * at a time (or in the account steps the stream serialises with those messages: promotion, demotion), and check
 * {@link StreamState.stopped} after every await before writing or sending more.
 */
import type { Logger } from '../../shared/logger.js';
import type { AccountStreamState } from './account-stream-state.js';
import type { AgentTransport } from './agent-transport.js';
import type { Outbox } from './outbox.js';
import type { SessionRow } from './session-row.js';
import type { LiveSession } from './session-registry.js';

/** One live stream as its handlers see it: the registry's view plus what the handlers read and change. */
export interface StreamState extends LiveSession {
  /** From the Hello; '' before it. Set once, by the Hello handler. */
  agentId: string;
  zone: string;
  /** The Hello's `connection` (which of the agent's parallel connections this is); 0 before it. */
  connection: number;
  version: string;
  /** The transport the stream came over (recorded in its `agent_sessions` row and its log lines). */
  readonly transport: AgentTransport;
  /** The stream's logger (with the session id, subject and transport); the Hello handler adds the agent id to it. */
  log: Logger;
  /** What the gateway sends on the stream. */
  readonly outbox: Outbox;
  /** True once the stream is ending (closed, failed, or the agent went away). */
  readonly stopped: boolean;
  /** True once the Welcome was queued: operations and account commands may be sent from then on. */
  welcomed: boolean;
  /**
   * The stream's accounts, one record each (account-stream-state.ts): what the agent announced, their verdicts, which
   * the stream claims, serves, or lost the lease of. Handlers move them only through its named transitions.
   */
  readonly accounts: AccountStreamState;
  /** The Welcome's session token (set by the Hello handler). */
  sessionToken: string;
  /** The stream's `agent_sessions` row. */
  readonly row: SessionRow;
  /**
   * Runs database work the stream does not wait for (its failure is logged with `failure`); the stream's cleanup
   * waits for it before ending the session row.
   */
  runInBackground(work: Promise<void>, failure: string): void;
}
