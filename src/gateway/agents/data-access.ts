/**
 * Which accounts an agent stream may send data for (event batches, sync markers, account reports). Trust comes from
 * the stream, not from the account names a message carries: a stream writes only the accounts the gateway told it to
 * cache (a CACHING verdict in this session). Data for an account it cached earlier in the session but no longer does
 * (its lease was lost, a STANDBY verdict followed) may still be in flight when the agent learns: it is acknowledged
 * and dropped. Data for any other account — never announced, REFUSED, STANDBY, or another session's — ends the
 * stream with PERMISSION_DENIED (docs/agent-protocol.md, "Accounts a stream may write").
 */
import { Verdict } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { SessionRegistry } from './session-registry.js';
import type { StreamState } from './stream-state.js';

/** `write`: store it; `drop`: acknowledge and drop it (in flight from before a demotion); else why it is refused. */
export type DataAccess = 'write' | 'drop' | { refused: string };

/** The access of `state` to data of `account`. */
export function dataAccess(state: StreamState, registry: SessionRegistry, account: string): DataAccess {
  if (registry.caches(account, state)) return 'write';
  if (state.accounts.lostLease(account) || state.accounts.claims(account)) return 'drop';
  const verdict = state.accounts.verdictOf(account);
  const why =
    verdict === undefined
      ? 'the agent has not announced it on this stream, or removed it'
      : verdict === Verdict.CACHING
        ? 'its CACHING verdict is not in force yet'
        : `its verdict on this stream is ${Verdict[verdict]}`;
  return {
    refused: `account ${JSON.stringify(account)} is not cached by this stream (${why}): only accounts with a CACHING verdict may send data`,
  };
}
