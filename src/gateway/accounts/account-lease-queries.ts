/**
 * The lease columns of `accounts` (part of the accounts repository, see account-repository.ts): renewing the leases a
 * replica holds (one statement for all of them), finding accounts whose lease is free (for STANDBY promotion), turning
 * accounts whose holder stopped renewing (its replica died) INACTIVE, and the lease check of fenced cache writes
 * (docs/architecture.md, rule 4): a write goes through only for accounts whose row still names the writing session and
 * the epoch its lease was granted with, unexpired.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { rowsOf, type DbOrTx } from '../../db/query-helpers.js';
import { LeaseLostError, type WriteFence } from './lease-fence.js';
import { GATEWAY_ACTOR, STREAMED_STATES_SQL, recordTransitions } from './account-states.js';

/** A lease to renew: the account, the session holding it, the epoch it was granted with. */
export interface LeaseToRenew {
  name: string;
  sessionId: string;
  epoch: number;
}

/**
 * Extends the leases replica `gatewayId` still holds exactly as given (same session, same epoch, still streamed) by
 * `seconds` from the database's now; returns the names renewed (the others are lost: demote them).
 */
export async function renewLeases(db: DbOrTx, gatewayId: string, leases: LeaseToRenew[], seconds: number): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  // The rows are locked in name order first, as the cache writes' lease check locks them (fencedCountsStatement): two
  // statements that lock many of the same rows in different orders deadlock, and Postgres breaks that after a second.
  const result = await db.execute(sql`
        update accounts a set lease_expires_at = now() + make_interval(secs => ${seconds})
        from (
          select l.name from accounts l
          join json_to_recordset(${JSON.stringify(leases.map((l) => ({ name: l.name, session_id: l.sessionId, epoch: l.epoch })))}::json)
            as r(name text, session_id text, epoch bigint)
            on l.name = r.name and l.session_id = r.session_id and l.lease_epoch = r.epoch
          where l.gateway_id = ${gatewayId} and l.state in (${STREAMED_STATES_SQL})
          order by l.name
          for update of l) r
        where a.name = r.name
        returning a.name`);
  return new Set(rowsOf(result).map((r) => String(r.name)));
}

/** Of `names`, those no live lease holds and that an agent may cache (not deactivated or being deleted). A read. */
export async function findFreeAccounts(db: DbOrTx, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const result = await db.execute(sql`
        select name from accounts
        where name in (select json_array_elements_text(${JSON.stringify(names)}::json))
          and desired_state <> 'INACTIVE' and state <> 'DELETING'
          and (state not in (${STREAMED_STATES_SQL}) or lease_expires_at is null or lease_expires_at < now())`);
  return rowsOf(result).map((r) => String(r.name));
}

/**
 * Streamed accounts whose lease expired more than `graceSeconds` ago → INACTIVE, recorded in the same transaction
 * (rows another replica is changing are skipped, not waited for). Returns their names.
 */
export async function expireLeases(db: Db, graceSeconds: number): Promise<string[]> {
  return db.transaction(async (tx) => {
    const result = await tx.execute(sql`
          update accounts a set state = 'INACTIVE', reason = '', lease_expires_at = null, updated_at = now()
          from (
            select name, state from accounts
            where state in (${STREAMED_STATES_SQL}) and lease_expires_at < now() - make_interval(secs => ${graceSeconds})
            order by name for update skip locked) old
          where a.name = old.name
          returning a.name, a.gateway_id, old.state as from_state`);
    const rows = rowsOf(result);
    await recordTransitions(
      tx,
      rows.map((r) => ({
        account: String(r.name),
        from: String(r.from_state),
        to: 'INACTIVE' as const,
        reason: `lease expired: gateway replica ${String(r.gateway_id)} stopped renewing it`,
        actor: GATEWAY_ACTOR,
      })),
    );
    return rows.map((r) => String(r.name));
  });
}

/**
 * SQL condition (over table alias `alias` of `accounts`) that the row is leased to the fence's session with the epoch
 * listed for it in the JSON parameter this function embeds.
 */
function leasedCondition(fence: WriteFence, alias: string): SQL {
  const a = sql.raw(alias);
  return sql`${a}.session_id = ${fence.sessionId}
    and ${a}.lease_expires_at > now()
    and (${a}.name, ${a}.lease_epoch) in (
      select f.name, f.epoch from json_to_recordset(${JSON.stringify(fence.leases)}::json) as f(name text, epoch bigint))`;
}

/**
 * Inside a transaction: locks (FOR SHARE, so a concurrent takeover waits for this transaction) the accounts rows the
 * fence still holds, and throws {@link LeaseLostError} naming those it does not.
 */
export async function assertLeases(tx: DbOrTx, fence: WriteFence): Promise<void> {
  if (fence.leases.length === 0) return;
  const result = await tx.execute(sql`select a.name from accounts a where ${leasedCondition(fence, 'a')} for share of a`);
  const held = new Set(rowsOf(result).map((r) => String(r.name)));
  const lost = fence.leases.map((l) => l.name).filter((n) => !held.has(n));
  if (lost.length > 0) throw new LeaseLostError(lost);
}

/**
 * The accounts part of an unfenced cache write (tests, tools), as the body of one data-modifying CTE for
 * object-writer.ts's single statement: adds each account's event count to `events_total`, moves `last_event_at` when
 * the count is not zero (bookmarks touch an account without being changes), and gives the accounts of `versioned` —
 * those whose batch changed objects of a versioned kind (schema.ts, `objects_version`) — a new `objects_version`.
 */
export function countEventsStatement(eventCounts: Record<string, number>, versioned: readonly string[] = []): SQL {
  const counts = sql`json_each_text(${JSON.stringify(eventCounts)}::json) as c(name, n)`;
  return sql`update accounts a set last_event_at = case when c.n::bigint > 0 then now() else a.last_event_at end,
    events_total = a.events_total + c.n::bigint,
    objects_version = case when ${JSON.stringify(versioned)}::jsonb ? c.name then nextval('objects_version_seq') else a.objects_version end
            from ${counts} where a.name = c.name`;
}

/** One account of one entry (`b`) of a fenced group write: the session and epoch it presents, its counts. */
export interface AccountCount {
  b: number;
  name: string;
  session: string;
  epoch: number;
  /** Changes counted (bookmarks are not). */
  n: number;
  /** The entry changed objects of a versioned kind of this account: `objects_version` moves. */
  versioned: boolean;
}

/**
 * The accounts part — and the lease check — of a fenced cache write of one or more streams' batches, as the body of
 * one data-modifying CTE for object-writer.ts's single statement: for each (entry, account) whose row still names
 * that entry's session and epoch with an unexpired lease, adds the count to `events_total`, moves `last_event_at`
 * when it is not zero and `objects_version` when `versioned`, and returns `(name, b)`; the caller's other parts must
 * write only for those pairs. A row matches one session at most, so one account passes for one entry at most. The
 * rows are locked in name order (as lease renewals lock them), so two statements over many accounts never deadlock.
 */
export function fencedCountsStatement(counts: readonly AccountCount[]): SQL {
  return sql`update accounts a set last_event_at = case when c.n > 0 then now() else a.last_event_at end,
    events_total = a.events_total + c.n,
    objects_version = case when c.versioned then nextval('objects_version_seq') else a.objects_version end
    from (
      select l.name, c.b, c.n, c.versioned
      from accounts l
      join json_to_recordset(${JSON.stringify(counts)}::json) as c(b int, name text, session text, epoch bigint, n bigint, versioned boolean)
        on l.name = c.name and l.session_id = c.session and l.lease_epoch = c.epoch
      where l.lease_expires_at > now()
      order by l.name
      for update of l) c
    where a.name = c.name
    returning a.name, c.b`;
}
