/**
 * The one seam through which features send an operation to the agent serving an account. Today it looks only at
 * this replica's streams; forwarding to the replica that holds the account's stream goes behind this same function,
 * so callers must not assume the target is local (it is async for that reason).
 */
import type { Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { LiveSession, SessionRegistry } from '../agents/session-registry.js';

/** Where an operation went. */
export interface DispatchTarget {
  agentId: string;
  sessionId: string;
}

/**
 * Sends `operation` (whose `timeout` the caller already set to the time remaining) to the session that caches the
 * account, or failing that to a STANDBY session of it. Resolves undefined when no stream could take it — the caller
 * keeps the operation pending and retries when a session starts. Delivery is at least once: the agent de-duplicates
 * on the operation id.
 */
export type Dispatch = (account: string, operation: Operation) => Promise<DispatchTarget | undefined>;

/** Creates the dispatcher over this replica's live sessions. */
export function createDispatch(registry: SessionRegistry): Dispatch {
  return async (account, operation) => {
    const owner = registry.ownerOf(account);
    const candidates: LiveSession[] = owner ? [owner] : [];
    for (const s of registry.all()) if (s !== owner && s.serves(account)) candidates.push(s);
    for (const session of candidates) {
      if (session.sendOperation(operation)) return { agentId: session.agentId, sessionId: session.id };
    }
    return undefined;
  };
}
