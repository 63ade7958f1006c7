/**
 * What an agent session tells the operations feature: that a session started serving accounts (so their pending and
 * sent operations are delivered to it), and that a result arrived. The session never waits on these: they must not
 * throw, and report their own failures.
 */
import type { OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { LiveSession } from './session-registry.js';

/** Callbacks from agent sessions into the operations feature. */
export interface OperationHooks {
  /** After the Welcome went out: `accounts` are those the session serves (CACHING or STANDBY). */
  sessionStarted(session: LiveSession, accounts: string[]): void;
  /** An `operation_result` arrived on the session. */
  resultReceived(session: LiveSession, result: OperationResult): void;
}
