/**
 * Which transport carries an agent stream. The session code (agent-session.ts) is the same above every transport; the
 * endpoint that accepted the stream names its transport when it hands the stream over, and the session records it in
 * its `agent_sessions` row, its log lines and the listings (ListAgents, `GET /armory/agents`, the accounts it caches).
 */

/**
 * How an agent stream reaches the gateway:
 *
 * - `grpc`: an RPC stream of `outpost.agent.v1.AgentService/Connect` over HTTP — gRPC over HTTP/2, served by the
 *   gateway's own endpoint (src/gateway/agents/agent-stream-endpoint.ts), and the Connect and gRPC-Web forms of the same
 *   method, which connect-node serves;
 * - `websocket`: the same messages over a WebSocket on the gateway's HTTP port.
 */
export type AgentTransport = 'grpc' | 'websocket';
