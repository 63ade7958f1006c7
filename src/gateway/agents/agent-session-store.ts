/**
 * The `agent_sessions` rows: one per welcomed agent stream, shared by every replica. A row holds the SHA-256 of the
 * session's token (the token itself exists only in the Welcome the agent received), who the stream authenticated as,
 * and its current verdict lists; `ended_at` stays null while the stream lives. Anything later tied to a session
 * (resuming it, a result relayed by another replica) proves itself with {@link verifySessionToken}.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { and, asc, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import type { Database, Db } from '../../db/database.js';
import { agentSessions } from '../../db/schema.js';
import { Verdict } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { AgentTransport } from './agent-transport.js';

/** Bytes of randomness in a session token. */
const SESSION_TOKEN_BYTES = 32;

/** A live stream's `last_seen_at` is written at most this often. */
export const SESSION_TOUCH_INTERVAL_MS = 5000;

/**
 * How old `last_seen_at` may be before a row without `ended_at` counts as a dead replica's leftover: a live stream
 * hears from its agent at least every `deadAfterSeconds` (or is closed, which ends the row), and touches at most
 * every {@link SESSION_TOUCH_INTERVAL_MS}.
 */
export function staleAfterSeconds(deadAfterSeconds: number): number {
  return Math.ceil(deadAfterSeconds + (3 * SESSION_TOUCH_INTERVAL_MS) / 1000);
}

/** Touches of all streams wait this long to be written together (thousands of idle streams: one statement, not thousands). */
export const TOUCH_BATCH_MS = 1000;

/** Sessions per touch statement (each is a bind parameter). */
const TOUCH_CHUNK = 5000;

/** Longest token string looked at; anything longer is wrong without hashing it. */
const MAX_TOKEN_CHARS = 256;

/** What a session row says about a stream (never the token hash). */
export interface AgentSessionRow {
  id: string;
  agentId: string;
  zone: string;
  version: string;
  subject: string;
  /** `identityOf(principal)` of the stream: what a resume must match. */
  identity: string;
  gatewayId: string;
  /**
   * The transport the stream came over: an {@link AgentTransport} (`grpc` for rows written before it was stored); a
   * row another version of the gateway wrote may name a transport this one does not know, shown as it is.
   */
  transport: string;
  caching: string[];
  standby: string[];
  refused: string[];
  connectedAt: Date;
  lastSeenAt: Date;
}

/** The verdict lists of a session. */
export interface SessionVerdictLists {
  caching: string[];
  standby: string[];
  refused: string[];
}

/** The sorted lists of a session's verdicts (account name → CACHING, STANDBY or REFUSED). */
export function toVerdictLists(verdicts: ReadonlyMap<string, Verdict>): SessionVerdictLists {
  const lists: SessionVerdictLists = { caching: [], standby: [], refused: [] };
  for (const [name, v] of verdicts) {
    if (v === Verdict.CACHING) lists.caching.push(name);
    else if (v === Verdict.STANDBY) lists.standby.push(name);
    else lists.refused.push(name);
  }
  for (const list of Object.values(lists)) list.sort();
  return lists;
}

/** The row written when a stream is welcomed. */
export type NewAgentSession = Omit<AgentSessionRow, 'connectedAt' | 'lastSeenAt' | 'transport'> & { transport: AgentTransport };

/** A session whose token was verified. */
export interface VerifiedSession {
  id: string;
  agentId: string;
  subject: string;
  /** The stream's authenticated identity (`identityOf`); '' for rows from before it was stored. */
  identity: string;
  ended: boolean;
  /** Accounts the session serves (its caching and standby lists). */
  accounts: string[];
}

/** Reads and writes `agent_sessions`. */
export interface AgentSessionStore {
  /** Inserts the row of a welcomed stream; only `tokenHash` (see {@link hashSessionToken}) is stored. */
  start(session: NewAgentSession, tokenHash: string): Promise<void>;
  /** Replaces the verdict lists (after an AccountsChanged). */
  updateVerdicts(sessionId: string, lists: SessionVerdictLists): Promise<void>;
  /**
   * Records that the stream was seen alive now. Callers throttle it (a write per few seconds at most); the store
   * gathers the touches of every stream for {@link TOUCH_BATCH_MS} into one statement, and the promise settles with it.
   */
  touch(sessionId: string): Promise<void>;
  /** Marks the session ended (idempotent). */
  end(sessionId: string): Promise<void>;
  /** The session when `token` is its token (constant-time compare of the hashes); undefined otherwise. */
  verify(sessionId: string, token: string): Promise<VerifiedSession | undefined>;
}

/** A fresh session token (base64url of 32 random bytes) and the hash to store. */
export function createSessionToken(): { token: string; hash: string } {
  const token = randomBytes(SESSION_TOKEN_BYTES).toString('base64url');
  return { token, hash: hashSessionToken(token) };
}

/** SHA-256 (hex) of a token: the only form a token is stored in. */
function hashSessionToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Creates the store over an open database. */
export function createAgentSessionStore(database: Database): AgentSessionStore {
  const { db } = database;
  let batch: { ids: Set<string>; written: Promise<void> } | undefined;
  const writeTouches = async (ids: string[]) => {
    for (let i = 0; i < ids.length; i += TOUCH_CHUNK) {
      await db
        .update(agentSessions)
        .set({ lastSeenAt: sql`now()` })
        .where(and(inArray(agentSessions.id, ids.slice(i, i + TOUCH_CHUNK)), isNull(agentSessions.endedAt)));
    }
  };
  return {
    async start(session, tokenHash) {
      await db.insert(agentSessions).values({ ...session, tokenHash });
    },
    async updateVerdicts(sessionId, lists) {
      await db
        .update(agentSessions)
        .set({ caching: lists.caching, standby: lists.standby, refused: lists.refused, lastSeenAt: sql`now()` })
        .where(eq(agentSessions.id, sessionId));
    },
    touch(sessionId) {
      if (!batch) {
        const ids = new Set<string>();
        const written = new Promise<void>((resolve) => setTimeout(resolve, TOUCH_BATCH_MS).unref()).then(() => {
          batch = undefined;
          return writeTouches([...ids]);
        });
        batch = { ids, written };
      }
      batch.ids.add(sessionId);
      return batch.written;
    },
    async end(sessionId) {
      await db
        .update(agentSessions)
        .set({ endedAt: sql`now()` })
        .where(and(eq(agentSessions.id, sessionId), isNull(agentSessions.endedAt)));
    },
    verify: (sessionId, token) => verifySession(database, sessionId, token),
  };
}

/**
 * True when `token` is the token the Welcome of session `sessionId` carried (whether or not the session still lives).
 * For anything tied to a session that arrives without its stream, e.g. a result relayed by another replica. Never
 * throws for bad input; database errors propagate.
 */
export async function verifySessionToken(database: Database, sessionId: string, token: string): Promise<boolean> {
  return (await verifySession(database, sessionId, token)) !== undefined;
}

/** The session when `token` is its token (constant-time compare of the hashes); undefined otherwise. */
async function verifySession(database: Database, sessionId: string, token: string): Promise<VerifiedSession | undefined> {
  if (!sessionId || !token || sessionId.length > 253 || token.length > MAX_TOKEN_CHARS) return undefined;
  const [row] = await database.db
    .select({
      id: agentSessions.id,
      agentId: agentSessions.agentId,
      subject: agentSessions.subject,
      identity: agentSessions.identity,
      tokenHash: agentSessions.tokenHash,
      endedAt: agentSessions.endedAt,
      caching: agentSessions.caching,
      standby: agentSessions.standby,
    })
    .from(agentSessions)
    .where(eq(agentSessions.id, sessionId))
    .limit(1);
  // Hash and compare even for an unknown session, so timing does not tell which session ids exist.
  const presented = Buffer.from(hashSessionToken(token), 'utf8');
  const stored = Buffer.from(row?.tokenHash ?? '0'.repeat(64), 'utf8');
  const match = stored.length === presented.length && timingSafeEqual(stored, presented);
  if (!row || !match) return undefined;
  return {
    id: row.id,
    agentId: row.agentId,
    subject: row.subject,
    identity: row.identity,
    ended: row.endedAt !== null,
    accounts: [...row.caching, ...row.standby],
  };
}

/** Filter of {@link listLiveSessions}. */
export interface LiveSessionFilter {
  /** Only this agent id; empty or absent lists every agent. */
  agentId?: string;
  /**
   * Rows not touched for this long count as ended even without `ended_at` (their replica died before it could write
   * it). Must exceed the stream's dead-peer timeout plus the touch interval.
   */
  staleAfterSeconds: number;
}

/** The live sessions of every replica (ordered by agent id, newest first per agent), never with their token hash. */
export async function listLiveSessions(database: Database, filter: LiveSessionFilter): Promise<AgentSessionRow[]> {
  return database.db
    .select({
      id: agentSessions.id,
      agentId: agentSessions.agentId,
      zone: agentSessions.zone,
      version: agentSessions.version,
      subject: agentSessions.subject,
      identity: agentSessions.identity,
      gatewayId: agentSessions.gatewayId,
      transport: agentSessions.transport,
      caching: agentSessions.caching,
      standby: agentSessions.standby,
      refused: agentSessions.refused,
      connectedAt: agentSessions.connectedAt,
      lastSeenAt: agentSessions.lastSeenAt,
    })
    .from(agentSessions)
    .where(and(isLive(filter.staleAfterSeconds), filter.agentId ? eq(agentSessions.agentId, filter.agentId) : undefined))
    .orderBy(asc(agentSessions.agentId), sql`${agentSessions.connectedAt} desc`, asc(agentSessions.id));
}

/** An account and the session its row names as holder (`accounts.session_id`). */
export interface AccountHolder {
  account: string;
  sessionId: string;
}

/**
 * The transport of the live stream that caches each account (account name → transport): its holder session's row is
 * live (as {@link listLiveSessions} counts it) and lists the account as caching. Accounts no live stream caches (no
 * holder, an ended or stale session, or one that stands by for it or released it) are absent.
 */
export async function liveCachingTransports(
  db: Db,
  holders: readonly AccountHolder[],
  staleAfterSeconds: number,
): Promise<Map<string, string>> {
  const ids = [...new Set(holders.map((h) => h.sessionId).filter((id) => id !== ''))];
  const transports = new Map<string, string>();
  if (ids.length === 0) return transports;
  const rows = await db
    .select({ id: agentSessions.id, transport: agentSessions.transport, caching: agentSessions.caching })
    .from(agentSessions)
    .where(and(inArray(agentSessions.id, ids), isLive(staleAfterSeconds)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const h of holders) {
    const row = byId.get(h.sessionId);
    if (row?.caching.includes(h.account)) transports.set(h.account, row.transport);
  }
  return transports;
}

/** Rows not ended and touched within `staleAfterSeconds` (see {@link LiveSessionFilter.staleAfterSeconds}). */
function isLive(staleAfterSeconds: number) {
  const staleAfter = Math.max(1, Math.ceil(staleAfterSeconds));
  return and(isNull(agentSessions.endedAt), gt(agentSessions.lastSeenAt, sql`now() - (${staleAfter}::int * interval '1 second')`));
}

/**
 * {@link verifySession} with a short memory of successful checks (by session id and token hash), for the result relay
 * route, which checks the same live session for every relayed result. A refusal is never remembered; a remembered
 * session's account lists may lag a promotion by `ttlMs` (the relaying replica then records the result itself).
 */
export function createCachedSessionVerifier(
  database: Database,
  ttlMs = 5000,
): (sessionId: string, token: string) => Promise<VerifiedSession | undefined> {
  const cache = new Map<string, { session: VerifiedSession; until: number }>();
  return async (sessionId, token) => {
    if (!sessionId || !token || token.length > MAX_TOKEN_CHARS) return undefined;
    const key = `${sessionId}\n${hashSessionToken(token)}`;
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.session;
    const session = await verifySession(database, sessionId, token);
    if (session) {
      if (cache.size >= 1000) cache.clear();
      cache.set(key, { session, until: Date.now() + ttlMs });
    } else cache.delete(key);
    return session;
  };
}
