/**
 * `AccountService.ListAgents`: the live agent streams of every replica, read from `agent_sessions` (rows not ended,
 * and touched recently enough that their replica is alive). The session token hash never leaves the database.
 */
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import type { Database } from '../../db/database.js';
import type { Agent, AccountService } from '../../gen/outpost/api/v1/account_service_pb.js';
import { listLiveSessions, type AgentSessionRow } from '../agents/agent-session-store.js';
import { invalidArgument } from '../http/errors.js';

/** What the listing needs from the gateway configuration. */
export interface AgentListingOptions {
  /** Rows untouched for this long count as ended (see `staleAfterSeconds` in agent-session-store). */
  staleAfterSeconds: number;
}

/** The ListAgents method, to spread into the AccountService implementation. */
export function createAgentListing(
  database: Database,
  options: AgentListingOptions,
): Pick<ServiceImpl<typeof AccountService>, 'listAgents'> {
  return {
    async listAgents(req) {
      if (req.agentId.length > 253) throw invalidArgument('agent_id is longer than 253 characters');
      const rows = await listLiveSessions(database, { agentId: req.agentId, staleAfterSeconds: options.staleAfterSeconds });
      return { agents: rows.map(toAgentMessage) };
    },
  };
}

/** The protobuf form of a session row. */
function toAgentMessage(row: AgentSessionRow): Agent {
  return {
    $typeName: 'outpost.api.v1.Agent',
    agentId: row.agentId,
    sessionId: row.id,
    gatewayId: row.gatewayId,
    zone: row.zone,
    version: row.version,
    subject: row.subject,
    transport: row.transport,
    caching: [...row.caching],
    standby: [...row.standby],
    refused: [...row.refused],
    connectedTime: timestampFromDate(row.connectedAt),
    lastSeenTime: timestampFromDate(row.lastSeenAt),
  };
}
