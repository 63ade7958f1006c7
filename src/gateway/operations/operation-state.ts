/**
 * Operation states as stored (text) and as served (`OperationState`), and which of them are terminal.
 */
import { OperationState } from '../../gen/outpost/api/v1/operation_service_pb.js';

/** The `state` column's values. */
export type StoredState = 'PENDING' | 'SENT' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT';

/** States after which nothing changes. */
const TERMINAL_STATES: readonly StoredState[] = ['SUCCEEDED', 'FAILED', 'TIMED_OUT'];
/** States an operation can still leave. */
export const OPEN_STATES: readonly StoredState[] = ['PENDING', 'SENT'];

const toEnum: Record<StoredState, OperationState> = {
  PENDING: OperationState.PENDING,
  SENT: OperationState.SENT,
  SUCCEEDED: OperationState.SUCCEEDED,
  FAILED: OperationState.FAILED,
  TIMED_OUT: OperationState.TIMED_OUT,
};

/** True for SUCCEEDED, FAILED and TIMED_OUT. */
export function isTerminal(state: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}

/** Orders states along an operation's life, so a stale notification never moves a watcher backwards. */
export function stateRank(state: string): number {
  return state === 'PENDING' ? 0 : state === 'SENT' ? 1 : 2;
}

/** The API enum of a stored state (UNSPECIFIED for a value this version does not know). */
export function stateToEnum(state: string): OperationState {
  return toEnum[state as StoredState] ?? OperationState.UNSPECIFIED;
}

/** The stored state of an API enum value; undefined for UNSPECIFIED or an unknown number. */
export function stateFromEnum(state: OperationState): StoredState | undefined {
  for (const [name, value] of Object.entries(toEnum)) if (value === state) return name as StoredState;
  return undefined;
}
