/**
 * The live agent streams of this gateway replica, which of them caches each account, and the ownership lease this
 * replica holds for it (epoch, and until when it is valid by this process's monotonic clock). Everything here is
 * synchronous, so a Hello's verdicts are decided atomically with respect to other Hellos on this replica.
 */
import type { ConnectError } from '@connectrpc/connect';
import type { AccountCommand } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { Principal } from '../auth/principal.js';
import type { KubeChannel, KubeChannelEvents } from './kube-mux.js';

/** What the registry knows about one live stream. */
export interface LiveSession {
  readonly id: string;
  readonly agentId: string;
  /** Zone from the agent's Hello ('' before it). */
  readonly zone: string;
  /** Which of the agent's parallel connections the stream is (the Hello's `connection`; 0 before it). */
  readonly connection: number;
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
  /**
   * Queues the account command on the stream; false when the stream can no longer send (ended, or before its Welcome)
   * or when its agent identity may not register the account's name (the definition is not shown to it).
   */
  sendAccountCommand(command: AccountCommand): boolean;
  /**
   * Opens a proxied Kubernetes API request on the stream (kube-mux.ts); undefined when the stream cannot take one (not
   * welcomed yet, or ending).
   */
  openKube(events: KubeChannelEvents): KubeChannel | undefined;
  /**
   * The token the stream's Welcome carried: presented with results this replica relays to another one, which checks
   * it against the stored hash. Never log it.
   */
  readonly sessionToken: string;
  /** Accounts the stream serves as STANDBY now (candidates for promotion). */
  standbyAccounts(): string[];
  /**
   * Tries to take the accounts over for this stream (their caching agent went away); runs between the stream's
   * messages. Never rejects: failures are logged by the session.
   */
  promote(accounts: string[]): Promise<void>;
  /**
   * The database no longer gives this stream the accounts' leases (taken over, expired and reclaimed, or the account
   * was deleted): the stream stops caching them — it serves them as STANDBY and tells the agent so, which stops their
   * watches — while its other accounts go on. Never rejects.
   */
  leaseLost(accounts: string[]): Promise<void>;
}

/** The lease of an account held for a live session (see `accounts.lease_epoch`). */
interface HeldLease {
  account: string;
  session: LiveSession;
  epoch: number;
  /** `performance.now()` until which the lease is known valid; 0 while the claim is not granted yet. */
  validUntil: number;
}

/** Live sessions and account ownership on this replica. */
export interface SessionRegistry {
  add(session: LiveSession): void;
  /** Forgets the session and every account it cached. */
  remove(session: LiveSession): void;
  /** The live session caching the account, if any. */
  ownerOf(account: string): LiveSession | undefined;
  /**
   * Reserves the account for the session on this replica (before the database grants the lease); the caller checked
   * {@link ownerOf} first. The lease is not valid until {@link grant}.
   */
  claim(account: string, session: LiveSession): void;
  /** Records the lease the database granted (or renewed) for the session's claim; ignored when it no longer holds it. */
  grant(account: string, session: LiveSession, epoch: number, validUntil: number): void;
  /** The lease held for the account, if a live session of this replica holds it. */
  leaseOf(account: string): HeldLease | undefined;
  /** Every lease held on this replica. */
  leases(): HeldLease[];
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
  const owners = new Map<string, HeldLease>();
  return {
    add: (s) => void sessions.add(s),
    remove(s) {
      sessions.delete(s);
      for (const [account, lease] of owners) if (lease.session === s) owners.delete(account);
    },
    ownerOf: (account) => owners.get(account)?.session,
    claim: (account, s) => void owners.set(account, { account, session: s, epoch: 0, validUntil: 0 }),
    grant(account, s, epoch, validUntil) {
      const lease = owners.get(account);
      if (lease?.session !== s || epoch < lease.epoch) return;
      lease.epoch = epoch;
      lease.validUntil = validUntil;
    },
    leaseOf: (account) => {
      const lease = owners.get(account);
      return lease ? { ...lease } : undefined;
    },
    leases: () => [...owners.values()].map((l) => ({ ...l })),
    release(account, s) {
      if (owners.get(account)?.session === s) owners.delete(account);
    },
    caches: (account, s) => owners.get(account)?.session === s,
    sessionsOf: (agentId) => [...sessions].filter((s) => s.agentId === agentId),
    all: () => [...sessions],
  };
}
