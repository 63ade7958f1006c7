/**
 * Clouddriver-style REST listing of the connected agents: `GET /armory/agents` (array, every replica's live streams)
 * and `GET /armory/agents/{id}` (the newest live stream of that agent id; 404 when none). Read from `agent_sessions`;
 * the session token hash is never selected.
 */
import type { Hono } from 'hono';
import type { Database } from '../../db/database.js';
import { listLiveSessions, type AgentSessionRow } from '../agents/agent-session-store.js';
import type { RestEnv } from '../auth/rest-auth.js';
import { HttpError } from '../http/errors.js';

/** One agent stream as the REST routes show it. */
interface AgentJson {
  agentId: string;
  sessionId: string;
  gatewayId: string;
  zone: string;
  version: string;
  subject: string;
  /** The transport the stream came over: `grpc` or `websocket` (see `AgentTransport`). */
  transport: string;
  /** Every account the agent announced on the stream (caching, standby and refused). */
  accounts: string[];
  caching: string[];
  standby: string[];
  refused: string[];
  /** When the stream was welcomed (ISO 8601); `lastConnection` repeats it under the reference's name. */
  connectedTime: string;
  lastConnection: string;
  /** When the gateway last heard from the agent (updated every few seconds). */
  lastSeen: string;
}

/** Options of {@link addAgentRoutes}. */
export interface AgentRoutesOptions {
  /** Rows untouched for this long count as ended (see `staleAfterSeconds` in agent-session-store). */
  staleAfterSeconds: number;
}

/** Adds the routes to `app` (GET only; other methods get 405). */
export function addAgentRoutes(app: Hono<RestEnv>, database: Database, options: AgentRoutesOptions): void {
  app.get('/armory/agents', async (c) => {
    const rows = await listLiveSessions(database, { staleAfterSeconds: options.staleAfterSeconds });
    return c.json(rows.map(toAgentJson));
  });

  app.get('/armory/agents/:id', async (c) => {
    const id = c.req.param('id');
    if (id.length > 253) throw new HttpError(400, 'bad_request', 'agent id is longer than 253 characters');
    const [newest] = await listLiveSessions(database, { agentId: id, staleAfterSeconds: options.staleAfterSeconds });
    if (!newest) throw new HttpError(404, 'not_found', `no connected agent ${JSON.stringify(id)}`);
    return c.json(toAgentJson(newest));
  });

  for (const path of ['/armory/agents', '/armory/agents/:id']) {
    app.all(path, (c) => {
      c.header('Allow', 'GET, HEAD');
      throw new HttpError(405, 'method_not_allowed', `${c.req.method} is not allowed on ${c.req.path}`);
    });
  }
}

/** The JSON form of a session row. */
function toAgentJson(row: AgentSessionRow): AgentJson {
  const connected = row.connectedAt.toISOString();
  return {
    agentId: row.agentId,
    sessionId: row.id,
    gatewayId: row.gatewayId,
    zone: row.zone,
    version: row.version,
    subject: row.subject,
    transport: row.transport,
    accounts: [...row.caching, ...row.standby, ...row.refused].sort(),
    caching: [...row.caching],
    standby: [...row.standby],
    refused: [...row.refused],
    connectedTime: connected,
    lastConnection: connected,
    lastSeen: row.lastSeenAt.toISOString(),
  };
}
