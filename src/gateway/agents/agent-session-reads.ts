/**
 * Reads of `agent_sessions` for the surfaces above (the fleet summary: live streams per replica, standby streams per
 * account): they live here, next to the table's owner
 * agent-session-store.ts, so a column change reaches only this folder (docs/architecture.md, "One owner per table").
 * A session row counts as live while it is not ended and was touched within `staleAfterSeconds`
 * (agent-session-store.ts's staleAfterSeconds): callers must pass that same bound.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { rowsOf } from '../../db/query-helpers.js';
import { agentSessions } from '../../db/schema.js';

/** Live agent streams per replica id (replicas without any are absent). */
export async function liveSessionsByReplica(db: Db, staleAfterSeconds: number): Promise<Map<string, number>> {
  const staleAfter = Math.max(1, Math.ceil(staleAfterSeconds));
  const result = await db.execute(sql`select ${agentSessions.gatewayId} as gateway_id, count(*)::int as n from ${agentSessions}
      where ${agentSessions.endedAt} is null and ${agentSessions.lastSeenAt} > now() - (${staleAfter}::int * interval '1 second')
      group by ${agentSessions.gatewayId}`);
  return new Map(rowsOf(result).map((r) => [String(r.gateway_id), Number(r.n)]));
}

/**
 * How many live agent streams stand by for each account (accounts no live stream stands by for are absent): one
 * grouped scan of the live sessions, for the fleet summary, however many accounts there are.
 */
export async function liveStandbyCounts(db: Db, staleAfterSeconds: number): Promise<Map<string, number>> {
  const staleAfter = Math.max(1, Math.ceil(staleAfterSeconds));
  const result = await db.execute(sql`select s.account as account, count(*)::int as n
      from ${agentSessions}, jsonb_array_elements_text(${agentSessions.standby}) as s(account)
      where ${agentSessions.endedAt} is null and ${agentSessions.lastSeenAt} > now() - (${staleAfter}::int * interval '1 second')
        and jsonb_array_length(${agentSessions.standby}) > 0
      group by s.account`);
  return new Map(rowsOf(result).map((r) => [String(r.account), Number(r.n)]));
}
