/**
 * The live state of one account the agent serves: what preparation found, where the account came from (the config
 * file or a gateway command), the gateway's verdict in the current session, and its running watches. Each account
 * has its own watch controller, so one account can be started or stopped mid-session without touching the others.
 */
import type { WatchState } from '../watch/scope-watcher.js';
import type { PreparedAccount } from './prepare-account.js';

/** Where an account definition came from. The file wins over a command for the same name. */
export type AccountSource = 'file' | 'dynamic';

/** The watches of one account in one session. */
interface AccountWatchRun {
  /** Aborting stops every watcher of the account (and makes them drop anything they still produce). */
  readonly controller: AbortController;
  /** Settles when every watcher has returned. */
  readonly done: Promise<void>;
}

/** Per-account state shared with the status snapshot and the operation runner. */
export interface AccountRuntime {
  prepared: PreparedAccount;
  source: AccountSource;
  verdict: 'caching' | 'standby' | 'refused' | 'unknown';
  reason?: string;
  watches: WatchState[];
  /** Set while the account streams in a session. */
  run?: AccountWatchRun;
}

/** A runtime for a freshly prepared account (no verdict yet). */
export function createAccountRuntime(prepared: PreparedAccount, source: AccountSource): AccountRuntime {
  return { prepared, source, verdict: 'unknown', watches: [] };
}

/** A placeholder preparation (not yet prepared: `preparedAt` 0 makes the connection loop prepare it). */
export function unpreparedAccount(config: PreparedAccount['config']): PreparedAccount {
  return { config, apiHost: '', caFingerprint: '', kubernetesVersion: '', kinds: [], scopes: [], skipped: [], error: '', preparedAt: 0 };
}
