/**
 * The lease columns of `accounts` as the lease keeper uses them: renewing the leases a replica holds (one statement
 * for all of them), finding accounts whose lease is free (for STANDBY promotion), and turning accounts whose holder
 * stopped renewing (its replica died) INACTIVE so the listing, cleanup and promotion see the truth.
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { GATEWAY_ACTOR, STREAMED_STATES_SQL, recordTransitions } from '../accounts/account-states.js';
import { rowsOf } from './lease-fence.js';

/** A lease to renew: the account, the session holding it, the epoch it was granted with. */
export interface LeaseToRenew {
  name: string;
  sessionId: string;
  epoch: number;
}

/** Lease statements. */
export interface LeaseStore {
  /** Extends the leases still held exactly as given; returns the names renewed (the others are lost). */
  renew(gatewayId: string, leases: LeaseToRenew[], seconds: number): Promise<Set<string>>;
  /** Of `names`, those no live lease holds and that an agent may cache (not deactivated or being deleted). */
  free(names: string[]): Promise<string[]>;
  /** Streamed accounts whose lease expired more than `graceSeconds` ago → INACTIVE (recorded). Returns their names. */
  expire(graceSeconds: number): Promise<string[]>;
}

/** Creates the store over an open database. */
export function createLeaseStore(database: Database): LeaseStore {
  const { db } = database;
  return {
    async renew(gatewayId, leases, seconds) {
      if (leases.length === 0) return new Set();
      const result = await db.execute(sql`
        update accounts a set lease_expires_at = now() + make_interval(secs => ${seconds})
        from json_to_recordset(${JSON.stringify(leases.map((l) => ({ name: l.name, session_id: l.sessionId, epoch: l.epoch })))}::json)
          as r(name text, session_id text, epoch bigint)
        where a.name = r.name and a.session_id = r.session_id and a.lease_epoch = r.epoch
          and a.gateway_id = ${gatewayId} and a.state in (${STREAMED_STATES_SQL})
        returning a.name`);
      return new Set(rowsOf(result).map((r) => String(r.name)));
    },

    async free(names) {
      if (names.length === 0) return [];
      const result = await db.execute(sql`
        select name from accounts
        where name in (select json_array_elements_text(${JSON.stringify(names)}::json))
          and desired_state <> 'INACTIVE' and state <> 'DELETING'
          and (state not in (${STREAMED_STATES_SQL}) or lease_expires_at is null or lease_expires_at < now())`);
      return rowsOf(result).map((r) => String(r.name));
    },

    async expire(graceSeconds) {
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
    },
  };
}
