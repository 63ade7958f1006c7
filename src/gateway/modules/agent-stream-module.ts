/**
 * The agent stream: where agents connect (gRPC on both ports; the handler's own endpoint for the usual binary form,
 * connect-node for the others). Builds what every stream writes through — the coalescing object writer, the sync
 * state, the session store — and serves `AgentService.Connect`. It starts nothing of its own: its streams end with
 * the servers (the composition's "servers and agent streams" step, after every module stopped).
 */
import { AgentService } from '../../gen/outpost/agent/v1/agent_pb.js';
import { serveAgentStream, type AgentSessionDeps } from '../agents/agent-session.js';
import { createAgentSessionStore } from '../agents/agent-session-store.js';
import { principalOf } from '../auth/connect-auth.js';
import { createObjectWriter } from '../cache/object-writer.js';
import { createSyncState } from '../cache/sync-state.js';
import { createCoalescingWriter } from '../cache/write-coalescer.js';
import { readsFirst } from '../operations/read-runner.js';
import { ANSWER_KINDS } from '../spinnaker/infrastructure/answer-cache.js';
import type { GatewayCore } from './gateway-core.js';
import type { BuiltModule, GatewayModule } from './module.js';

/** The agent stream module (module-list.ts). */
export const agentStreamModule: GatewayModule = {
  name: 'agent-stream',
  serves: '`AgentService.Connect`: the agents’ streams (gRPC, Connect, WebSocket)',
  build: (core) => {
    const deps = agentSessionDeps(core);
    return {
      services: [
        {
          type: AgentService,
          // connect-node serves the agent stream's other forms (Connect protocol, gRPC-Web, gRPC-JSON): RPC streams too.
          register: (router) =>
            router.service(AgentService, {
              connect: (requests, context) => serveAgentStream(requests, deps, principalOf(context.values), 'grpc'),
            }),
        },
      ],
      agentStream: (requests, principal, transport) => serveAgentStream(requests, deps, principal, transport),
    } satisfies BuiltModule;
  },
};

/** What every agent stream of this replica is served with. */
function agentSessionDeps(core: GatewayCore): AgentSessionDeps {
  const { config, database, metrics } = core;
  return {
    gatewayId: config.id,
    heartbeatIntervalSeconds: config.agents.heartbeatIntervalSeconds,
    deadAfterSeconds: config.agents.deadAfterSeconds,
    maxStreamAgeSeconds: config.agents.maxStreamAgeSeconds,
    maxUnacked: config.agents.maxUnacked,
    resumeMaxAgeSeconds: config.cache.resumeMaxAgeSeconds,
    leaseSeconds: config.replicas.leaseSeconds,
    onAccountsReleased: () => core.leaseKeeper.poke(),
    metrics,
    claimMetrics: metrics,
    registry: core.registry,
    db: database.db,
    // Only what Deck's kept answers are built from moves accounts' objects_version (answer-cache.ts).
    objectWriter: createCoalescingWriter(createObjectWriter(database, { versionedKinds: ANSWER_KINDS }), config.cache.coalesce, {
      metrics,
    }),
    syncState: createSyncState(database, { versionedKinds: ANSWER_KINDS }),
    logger: core.logger.child({ component: 'agent-stream' }),
    operations: readsFirst(core.operations, core.reads),
    sessionStore: createAgentSessionStore(database),
    dynamicAccounts: core.dynamicAccounts,
  };
}
