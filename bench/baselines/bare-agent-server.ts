/**
 * The connection-scale baseline: the least a Node server must hold for N idle agent streams. A bare connect-node
 * HTTP/2 server (h2c) implementing `AgentService.Connect` with no database, no registry and no timers: it answers a
 * Hello with a Welcome, acknowledges sync markers and ignores heartbeats. The gateway's memory per agent is reported
 * next to this one's, measured with the same swarm in the same run.
 *
 *   node --import tsx bench/baselines/bare-agent-server.ts   → prints {"event":"listening","port":P}
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create } from '@bufbuild/protobuf';
import type { ConnectRouter } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import {
  AgentService,
  ConnectResponseSchema,
  Verdict,
  type ConnectRequest,
  type ConnectResponse,
} from '../../src/gen/outpost/agent/v1/agent_pb.js';

async function* connect(requests: AsyncIterable<ConnectRequest>): AsyncIterable<ConnectResponse> {
  for await (const req of requests) {
    const m = req.message;
    if (m.case === 'hello') {
      yield create(ConnectResponseSchema, {
        message: {
          case: 'welcome',
          value: {
            sessionId: m.value.agentId,
            gatewayId: 'bare',
            heartbeatIntervalSeconds: Number(process.env.BARE_HEARTBEAT_SECONDS ?? 10),
            maxUnacked: 32,
            accounts: m.value.accounts.map((a) => ({ account: a.name, verdict: Verdict.CACHING })),
          },
        },
      });
    } else if (m.case === 'sync') {
      yield create(ConnectResponseSchema, { message: { case: 'ack', value: { sequence: m.value.sequence } } });
    }
  }
}

const routes = (router: ConnectRouter) => router.service(AgentService, { connect });
const server = http2.createServer(connectNodeAdapter({ routes }));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ event: 'listening', port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
