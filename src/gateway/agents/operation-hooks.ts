/**
 * What an agent session tells the operations feature: that a session resumed an earlier one, that it started serving
 * accounts (so their pending and sent operations are delivered to it), and that a result arrived. The session waits only for `sessionResumed`;
 * the others must not throw, and report their own failures.
 */
import type { OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { LiveSession } from './session-registry.js';

/** Callbacks from agent sessions into the operations feature. */
export interface OperationHooks {
  /** After the Welcome went out: `accounts` are those the session serves (CACHING or STANDBY). */
  sessionStarted(session: LiveSession, accounts: string[]): void;
  /**
   * The session resumed session `fromSessionId` (its Hello proved that session's token, as the same identity): the
   * operations sent on that session are now this session's to answer. Awaited before the Welcome goes out, so the
   * agent cannot answer them before; a rejection ends the stream (the agent reconnects and resumes again).
   */
  sessionResumed(fromSessionId: string, session: LiveSession): Promise<void>;
  /** An `operation_result` arrived on the session. */
  resultReceived(session: LiveSession, result: OperationResult): void;
}
