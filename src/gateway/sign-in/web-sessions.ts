/**
 * The dashboard's sessions (docs/sign-in.md, "The dashboard"): created at a sign-in's callback, found by the secret
 * of the browser's cookie (its SHA-256 is the row's key), renewed with the refresh token when their tokens are due
 * (session-refresh.ts), ended by sign-out, by `auth.oidc.sessionHours` after sign-in, by `idleMinutes` without use,
 * or by a renewal the provider refuses. Rows live in the database, so any replica serves any session and a restart
 * keeps them. Every decision uses the injected clock.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { Database } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import type { OidcIdentity, OidcIssuers } from '../auth/oidc-issuers.js';
import type { KeyRing } from '../secrets/key-ring.js';
import { isSessionSecret, newSessionSecret, sessionKeyOf } from './session-cookies.js';
import { refreshSession } from './session-refresh.js';
import { openTokens, refreshAtOf, sealTokens, type SessionTokens, type TokenLifetimes } from './session-tokens.js';
import {
  deleteEndedWebSessions,
  deleteWebSession,
  insertWebSession,
  readWebSession,
  touchWebSession,
  type WebSessionRow,
} from './web-session-store.js';

/** A live session: who, with which groups, until when. */
export interface WebSession {
  provider: string;
  /** `<provider>:<username>`. */
  subject: string;
  groups: string[];
  /** The absolute end. */
  expiresAt: Date;
}

/** The sessions of this gateway's database. */
export interface WebSessions {
  /**
   * Stores a session for a person the provider just vouched for; resolves with the secret the cookie carries and the
   * session's absolute end.
   */
  create(identity: OidcIdentity, tokens: SessionTokens, lifetimes: TokenLifetimes): Promise<{ secret: string; expiresAt: Date }>;
  /**
   * The live session of a cookie's secret, its tokens renewed when due and its use recorded. Rejects UNAUTHENTICATED
   * saying why when there is none or it ended (its row is then deleted), UNAVAILABLE when a due renewal cannot reach
   * the provider.
   */
  resolve(secret: string): Promise<WebSession>;
  /** The session as stored, neither renewed nor touched (who sent a refused request); undefined when none is live. */
  peek(secret: string): Promise<WebSession | undefined>;
  /** Ends the session: deletes its row; resolves with it and its ID token (the provider's sign-out hint), or undefined. */
  end(secret: string): Promise<{ session: WebSession; idToken?: string } | undefined>;
  /** Deletes every ended session, a bounded batch per statement; resolves with how many. */
  purge(): Promise<number>;
}

/** What {@link createWebSessions} needs. */
export interface WebSessionsDeps {
  database: Database;
  /** `secrets.keyFile`: seals the tokens. */
  keys: KeyRing;
  oidc: OidcIssuers;
  /** Epoch milliseconds: expiry, idleness and renewals are decided by it. */
  clock: () => number;
  /** `auth.oidc.sessionHours`. */
  sessionHours: number;
  /** `auth.oidc.idleMinutes`. */
  idleMinutes: number;
  logger: Logger;
}

/** A use is recorded at most this often (ms): one write a minute per session, not one per request. */
const TOUCH_EVERY_MS = 60_000;
/** Rows one purge statement deletes at most. */
const PURGE_BATCH = 500;

/** Creates the sessions over the database. */
export function createWebSessions(deps: WebSessionsDeps): WebSessions {
  const { database, keys, clock } = deps;
  const idleMs = deps.idleMinutes * 60_000;
  const db = database.db;

  const view = (row: WebSessionRow): WebSession => ({
    provider: row.provider,
    subject: row.subject,
    groups: row.groups,
    expiresAt: row.expiresAt,
  });
  /** Why a stored session is over at `now`, or undefined while it is live. */
  const endedBecause = (row: WebSessionRow, now: number): string | undefined => {
    if (row.expiresAt.getTime() <= now) return `it is older than auth.oidc.sessionHours (${deps.sessionHours})`;
    if (row.lastUsedAt.getTime() + idleMs <= now) return `it was not used for auth.oidc.idleMinutes (${deps.idleMinutes})`;
    return undefined;
  };
  const end = async (key: string, row: Pick<WebSessionRow, 'subject'>, reason: string): Promise<never> => {
    await deleteWebSession(db, key);
    deps.logger.info({ subject: row.subject, reason }, 'dashboard session ended');
    throw unauthenticated(`your dashboard session ended: ${reason}; sign in again`);
  };

  return {
    async create(identity, tokens, lifetimes) {
      const secret = newSessionSecret();
      const key = sessionKeyOf(secret);
      const now = clock();
      const expiresAt = new Date(now + deps.sessionHours * 3_600_000);
      await insertWebSession(db, {
        id: key,
        provider: identity.provider,
        subject: identity.subject,
        groups: identity.groups,
        tokens: await sealTokens(keys, key, tokens),
        refreshAt: refreshAtOf(now, lifetimes),
        createdAt: new Date(now),
        lastUsedAt: new Date(now),
        expiresAt,
      });
      return { secret, expiresAt };
    },
    async resolve(secret) {
      if (!isSessionSecret(secret)) throw unauthenticated('the dashboard session cookie is malformed; sign in again');
      const key = sessionKeyOf(secret);
      let row = await readWebSession(db, key);
      if (!row) throw unauthenticated('no such dashboard session (signed out, ended, or of another gateway); sign in again');
      const now = clock();
      const over = endedBecause(row, now);
      if (over) return end(key, row, over);
      if (row.refreshAt.getTime() <= now) {
        const outcome = await refreshSession(deps, key, now);
        if (outcome.kind === 'ended') return end(key, row, outcome.reason);
        row = outcome.row;
      }
      if (row.lastUsedAt.getTime() < now) await touchWebSession(db, key, new Date(now), new Date(now - TOUCH_EVERY_MS));
      return view(row);
    },
    async peek(secret) {
      if (!isSessionSecret(secret)) return undefined;
      const row = await readWebSession(db, sessionKeyOf(secret));
      return row && !endedBecause(row, clock()) ? view(row) : undefined;
    },
    async end(secret) {
      if (!isSessionSecret(secret)) return undefined;
      const key = sessionKeyOf(secret);
      const row = await readWebSession(db, key);
      if (!row || !(await deleteWebSession(db, key))) return undefined;
      const idToken = await openTokens(keys, key, row.tokens).then(
        (t) => t.idToken,
        () => undefined,
      );
      return { session: view(row), idToken };
    },
    async purge() {
      const now = clock();
      let total = 0;
      for (;;) {
        const deleted = await deleteEndedWebSessions(db, new Date(now), new Date(now - idleMs), PURGE_BATCH);
        total += deleted;
        if (deleted < PURGE_BATCH) break;
      }
      if (total > 0) deps.logger.info({ deleted: total }, 'ended dashboard sessions deleted');
      return total;
    },
  };
}

function unauthenticated(message: string): ConnectError {
  return new ConnectError(message, Code.Unauthenticated);
}
