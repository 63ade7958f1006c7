/**
 * The `accounts` rows as the agent streams write them (part of the accounts repository: every statement that writes
 * `accounts` lives in src/gateway/accounts/, see docs/architecture.md "Inside the gateway"). A claim marks accounts
 * ACTIVE under a session's ownership lease (docs/architecture.md, rule 4: it succeeds only when no other live lease
 * holds the account, and sets a new, larger epoch) and binds unbound names to the reporting cluster and identity
 * (docs/accounts.md, "Identity binding"). Every state change is recorded in `account_transitions` (actor
 * `agent:<id>`) in the same transaction as the row update.
 */
import { and, eq, inArray, isNull, like, lt, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import type { DbOrTx } from '../../db/query-helpers.js';
import { accounts } from '../../db/schema.js';
import type { AccountInfo } from '../../gen/outpost/agent/v1/agent_pb.js';
import { WEAK_IDENTITY_PREFIX, type AccountBinding } from './account-binding.js';
import { lockStates } from './account-repository.js';
import { NEW_ACCOUNT, STREAMED_STATES_SQL, agentActor, recordTransitions } from './account-states.js';

/** How a claim takes the lease. */
export interface LeaseTerms {
  /** Lease length; the holder renews it well before. */
  seconds: number;
  /**
   * Sessions whose live lease the claim may take over at once: the session the agent resumed (it proved its token, and
   * an agent runs one stream at a time, so that stream is dead even if its replica still thinks otherwise).
   */
  takeoverSessions: string[];
}

/** A registration of an account name by another cluster or another identity that admission refused. */
export interface RefusedClaim {
  agentId: string;
  apiHost: string;
  caFingerprint: string;
  reason: string;
  /** The claiming stream's identity (`identityOf`). */
  identity: string;
}

/** Who claims an account. */
export interface SessionIdentity {
  sessionId: string;
  agentId: string;
  gatewayId: string;
  /** Zone from the agent's Hello. */
  zone: string;
  /** `identityOf` the stream's principal: unbound names are bound to it, names bound to another are never claimed. */
  identity: string;
}

/** Current bindings of the named accounts (absent names are unbound). A plain read: decide nothing final from it. */
export async function readBindings(db: DbOrTx, names: string[]): Promise<Map<string, AccountBinding>> {
  if (names.length === 0) return new Map();
  const rows = await db
    .select({
      name: accounts.name,
      apiHost: accounts.apiHost,
      caFingerprint: accounts.caFingerprint,
      identity: accounts.boundIdentity,
      desiredState: accounts.desiredState,
      agentId: accounts.agentId,
      sessionId: accounts.sessionId,
      gatewayId: accounts.gatewayId,
      leased: sql<boolean>`(${accounts.state} in (${STREAMED_STATES_SQL}) and ${accounts.leaseExpiresAt} > now())`,
    })
    .from(accounts)
    .where(inArray(accounts.name, names));
  return new Map(
    rows.map((r) => [
      r.name,
      {
        name: r.name,
        apiHost: r.apiHost,
        caFingerprint: r.caFingerprint,
        identity: r.identity,
        desiredState: r.desiredState,
        holder: r.leased ? { agentId: r.agentId, sessionId: r.sessionId, gatewayId: r.gatewayId } : undefined,
      },
    ]),
  );
}

/**
 * Claims the accounts for the session in one transaction: marks them ACTIVE with a fresh lease (a new epoch) and binds
 * unbound names to the reported cluster and to the session's identity, atomically per row. A row bound to another
 * cluster or another identity, deactivated, being deleted, or held by another session's live lease (unless
 * `lease.takeoverSessions` names it) is left alone: the statement decides, whatever the caller checked before.
 * Returns the claimed names with their epochs.
 */
export async function claimAccounts(
  db: Db,
  session: SessionIdentity,
  infos: AccountInfo[],
  lease: LeaseTerms,
): Promise<Map<string, number>> {
  if (infos.length === 0) return new Map();
  const expiresAt = sql`now() + make_interval(secs => ${lease.seconds})`;
  return db.transaction(async (tx) => {
    const before = await lockStates(
      tx,
      infos.map((i) => i.name),
    );
    const rows = await tx
      .insert(accounts)
      .values(
        // Name order, like the locks: two Hellos inserting the same new names cannot deadlock.
        [...infos]
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
          .map((info) => ({
            name: info.name,
            state: 'ACTIVE',
            reason: info.error,
            agentId: session.agentId,
            sessionId: session.sessionId,
            gatewayId: session.gatewayId,
            zoneId: session.zone,
            boundIdentity: session.identity,
            ...describe(info),
            lastConnectionAt: sql`now()`,
            leaseEpoch: 1,
            leaseExpiresAt: expiresAt,
          })),
      )
      .onConflictDoUpdate({
        target: accounts.name,
        set: {
          state: 'ACTIVE',
          reason: sql`excluded.reason`,
          agentId: sql`excluded.agent_id`,
          sessionId: sql`excluded.session_id`,
          gatewayId: sql`excluded.gateway_id`,
          apiHost: sql`excluded.api_host`,
          caFingerprint: sql`excluded.ca_fingerprint`,
          kubernetesVersion: sql`excluded.kubernetes_version`,
          namespaces: sql`excluded.namespaces`,
          kinds: sql`excluded.kinds`,
          skippedKinds: sql`excluded.skipped_kinds`,
          properties: sql`excluded.properties`,
          // A dynamic account keeps the zone an admin gave it.
          zoneId: sql`case when ${accounts.source} = 'dynamic' then ${accounts.zoneId} else excluded.zone_id end`,
          // Binds a row that was never claimed (or that predates identity binding); a bound row keeps its identity
          // (the setWhere below only lets that identity through).
          boundIdentity: sql`excluded.bound_identity`,
          lastConnectionAt: sql`now()`,
          updatedAt: sql`now()`,
          leaseEpoch: sql`${accounts.leaseEpoch} + 1`,
          leaseExpiresAt: expiresAt,
        },
        setWhere: and(
          ne(accounts.desiredState, 'INACTIVE'),
          ne(accounts.state, 'DELETING'),
          // The database decides: another identity never claims a bound name, whatever it reports.
          or(
            eq(accounts.boundIdentity, ''),
            like(accounts.boundIdentity, `${WEAK_IDENTITY_PREFIX}%`),
            eq(accounts.boundIdentity, sql`excluded.bound_identity`),
          ),
          or(
            eq(accounts.apiHost, ''),
            and(eq(accounts.apiHost, sql`excluded.api_host`), eq(accounts.caFingerprint, sql`excluded.ca_fingerprint`)),
          ),
          // No other live lease: released, expired, never taken, or the agent's own previous session.
          or(
            ne(accounts.state, 'ACTIVE'),
            isNull(accounts.leaseExpiresAt),
            lt(accounts.leaseExpiresAt, sql`now()`),
            eq(accounts.sessionId, session.sessionId),
            lease.takeoverSessions.length > 0 ? inArray(accounts.sessionId, lease.takeoverSessions) : undefined,
          ),
        ),
      })
      .returning({ name: accounts.name, epoch: accounts.leaseEpoch });
    const claimed = new Map(rows.map((r) => [r.name, Number(r.epoch)]));
    const activated = new Set(claimed.keys());
    await recordTransitions(
      tx,
      [...activated].map((name) => ({
        account: name,
        from: before.get(name) ?? NEW_ACCOUNT,
        to: 'ACTIVE' as const,
        reason: `cached by session ${session.sessionId} on gateway ${session.gatewayId}`,
        actor: agentActor(session.agentId),
      })),
    );
    return claimed;
  });
}

/**
 * Removes the cached objects and watch states of accounts inside the caller's transaction: the cache owns those tables
 * and sits above the accounts (docs/architecture.md, "Which way imports go"), so the statements of accounts that must
 * clear a cache with their own change are handed the cache's removal by their callers.
 */
export type RemoveCaches = (tx: DbOrTx, accounts: readonly string[]) => Promise<void>;

/**
 * Marks the accounts INACTIVE and releases their lease, but only those still held by this session (a newer session
 * may own them). `reason` is recorded with the transitions. An account deleted meanwhile loses what its stream wrote
 * after the delete (`removeCaches`), in the same transaction.
 */
export async function releaseAccounts(
  db: Db,
  sessionId: string,
  names: string[],
  removeCaches: RemoveCaches,
  reason = 'its agent stopped serving it',
): Promise<void> {
  if (names.length === 0) return;
  await db.transaction(async (tx) => {
    const before = await lockStates(tx, names);
    const rows = await tx
      .update(accounts)
      .set({ state: 'INACTIVE', reason: '', leaseExpiresAt: null, updatedAt: sql`now()` })
      .where(and(inArray(accounts.name, names), eq(accounts.sessionId, sessionId), ne(accounts.state, 'DELETING')))
      .returning({ name: accounts.name, agentId: accounts.agentId });
    await recordTransitions(
      tx,
      rows.map((r) => ({
        account: r.name,
        from: before.get(r.name) ?? NEW_ACCOUNT,
        to: 'INACTIVE' as const,
        reason,
        actor: agentActor(r.agentId),
      })),
    );
    // An account deleted while this stream still served it may have received events after the delete: now that
    // the stream let go of it, nothing more can arrive, so what they left is removed.
    const deleted = names.filter((n) => !before.has(n));
    if (deleted.length > 0) await removeCaches(tx, deleted);
  });
}

/** Records the latest refused claim of a bound name on its row (the row's state and binding stay as they are). */
export async function recordRefusedClaim(db: DbOrTx, name: string, claim: RefusedClaim): Promise<void> {
  await db
    .update(accounts)
    .set({ refusedClaim: { ...claim, at: new Date().toISOString() } })
    .where(eq(accounts.name, name));
}

/** Applies an AccountReport's description to an account the session holds (a row it no longer holds is left alone). */
export async function applyAccountReport(db: DbOrTx, sessionId: string, info: AccountInfo): Promise<void> {
  // A cluster that can no longer be reached keeps its binding and description; only the reason changes.
  const description = info.apiHost === '' ? {} : describe(info);
  await db
    .update(accounts)
    .set({ ...description, reason: info.error, updatedAt: sql`now()` })
    .where(and(eq(accounts.name, info.name), eq(accounts.sessionId, sessionId)));
}

/**
 * Records accounts an agent cannot serve (its cluster could not be loaded or reached: `info.error`, no API host) as
 * FAILED with the agent's reason, inserting the row when the name is new. A row that a live lease holds, that is
 * being deleted or that an admin deactivated is left alone: one agent's failure never takes a working account down,
 * and an unreachable cluster never binds a name; a row bound to another agent identity is not this agent's to mark.
 */
export async function recordAccountFailures(db: Db, agentId: string, zone: string, infos: AccountInfo[], identity: string): Promise<void> {
  if (infos.length === 0) return;
  const reasons = new Map(infos.map((i) => [i.name, `the agent cannot serve it: ${i.error}`]));
  await db.transaction(async (tx) => {
    const names = [...reasons.keys()].sort();
    const before = await lockStates(tx, names);
    const rows = await tx
      .insert(accounts)
      .values(names.map((name) => ({ name, state: 'FAILED', reason: reasons.get(name)!, agentId, zoneId: zone })))
      .onConflictDoUpdate({
        target: accounts.name,
        set: { state: 'FAILED', reason: sql`excluded.reason`, updatedAt: sql`now()` },
        setWhere: and(
          ne(accounts.desiredState, 'INACTIVE'),
          ne(accounts.state, 'DELETING'),
          sql`not (${accounts.state} in (${STREAMED_STATES_SQL}) and ${accounts.leaseExpiresAt} > now())`,
          or(
            eq(accounts.boundIdentity, ''),
            like(accounts.boundIdentity, `${WEAK_IDENTITY_PREFIX}%`),
            eq(accounts.boundIdentity, identity),
          ),
        ),
      })
      .returning({ name: accounts.name });
    await recordTransitions(
      tx,
      rows
        .filter((r) => before.get(r.name) !== 'FAILED')
        .map((r) => ({
          account: r.name,
          from: before.get(r.name) ?? NEW_ACCOUNT,
          to: 'FAILED' as const,
          reason: reasons.get(r.name)!,
          actor: agentActor(agentId),
        })),
    );
  });
}

function describe(info: AccountInfo) {
  return {
    apiHost: info.apiHost,
    caFingerprint: info.caFingerprint,
    kubernetesVersion: info.kubernetesVersion,
    namespaces: [...info.namespaces],
    kinds: info.kinds.map((k) => ({ apiVersion: k.apiVersion, kind: k.kind, resource: k.resource, namespaced: k.namespaced })),
    skippedKinds: info.skippedKinds.map((k) => ({ apiVersion: k.apiVersion, kind: k.kind, reason: k.reason })),
    properties: { ...info.properties },
  };
}
