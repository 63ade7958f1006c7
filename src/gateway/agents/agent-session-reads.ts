/**
 * Reads of `agent_sessions` for the surfaces above (the fleet summary): they live here, next to the table's owner
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
