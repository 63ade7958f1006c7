/**
 * The live agent streams of this gateway replica and which of them caches each account. Everything here is
 * synchronous, so a Hello's verdicts are decided atomically with respect to other Hellos on this replica.
 */
import type { ConnectError } from '@connectrpc/connect';
import type { AccountCommand } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { Principal } from '../auth/principal.js';

/** What the registry knows about one live stream. */
export interface LiveSession {
  readonly id: string;
  readonly agentId: string;
  /** Zone from the agent's Hello ('' before it). */
  readonly zone: string;
  /** Who the stream authenticated as. */
  readonly principal: Principal;
  /** Ends the stream: cleanly without an error (shutdown), or with the error (takeover, dead peer). */
  close(error?: ConnectError): void;
  /** Resolves once the stream ended and its accounts were released in the database. */
  readonly done: Promise<void>;
  /** True when the session was admitted for the account (CACHING or STANDBY) and is still live. */
  serves(account: string): boolean;
  /** Queues the operation on the stream; false when the stream can no longer send (ended, or before its Welcome). */
  sendOperation(operation: Operation): boolean;
  /** Queues the account command on the stream; false when the stream can no longer send (ended, or before its Welcome). */
  sendAccountCommand(command: AccountCommand): boolean;
}

/** Live sessions and account ownership on this replica. */
export interface SessionRegistry {
  add(session: LiveSession): void;
  /** Forgets the session and every account it cached. */
  remove(session: LiveSession): void;
  /** The live session caching the account, if any. */
  ownerOf(account: string): LiveSession | undefined;
  /** Records that the session caches the account; the caller checked {@link ownerOf} first. */
  claim(account: string, session: LiveSession): void;
  /** Drops one claim, if the session still holds it. */
  release(account: string, session: LiveSession): void;
  /** True while the session holds the account. */
  caches(account: string, session: LiveSession): boolean;
  /** Live sessions of one agent id. */
  sessionsOf(agentId: string): LiveSession[];
  /** Every live session. */
  all(): LiveSession[];
}

/** Creates an empty registry. */
export function createSessionRegistry(): SessionRegistry {
  const sessions = new Set<LiveSession>();
  const owners = new Map<string, LiveSession>();
  return {
    add: (s) => void sessions.add(s),
    remove(s) {
      sessions.delete(s);
      for (const [account, owner] of owners) if (owner === s) owners.delete(account);
    },
    ownerOf: (account) => owners.get(account),
    claim: (account, s) => void owners.set(account, s),
    release(account, s) {
      if (owners.get(account) === s) owners.delete(account);
    },
    caches: (account, s) => owners.get(account) === s,
    sessionsOf: (agentId) => [...sessions].filter((s) => s.agentId === agentId),
    all: () => [...sessions],
  };
}
