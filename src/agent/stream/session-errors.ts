/**
 * How a session ends, as the connection loop reads it: whether it got as far as a Welcome (a welcomed stream that
 * ends resets the backoff and keeps its resume token), and whether it ended only to reach another gateway replica.
 */

/** Raised when the stream ends; `welcomed` tells whether the session got as far as a Welcome. */
export class SessionEndedError extends Error {
  readonly welcomed: boolean;
  constructor(message: string, welcomed: boolean, cause?: unknown) {
    super(message, { cause });
    this.name = 'SessionEndedError';
    this.welcomed = welcomed;
  }
}

/** Ends a welcomed session that reached the replica the agent's other connection is on (see `sameReplica`). */
export class SameReplicaError extends SessionEndedError {
  constructor(gatewayId: string) {
    super(`reached gateway replica ${gatewayId}, which the agent's other connection is on; reconnecting to reach another`, true);
    this.name = 'SameReplicaError';
  }
}
