/**
 * gRPC calls that the gateway ends with an error before it sends any message, each with the status it owes: the agent
 * stream's own refusals (agent-stream-endpoint.ts), the refusals from the headers (pre-admission.ts), and errors of
 * the client RPCs served by connect-node. Shared by the frame-level test (a raw node:http2 client) and the grpcio
 * probe (test/conformance/grpc-status-probe.py), so both clients see the same calls.
 *
 * The gateway these run against must be started with {@link statusCaseConfig} (credentials required).
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { ConnectRequestSchema, EventType } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import {
  GetOperationRequestSchema,
  SubmitOperationRequestSchema,
  WaitOperationRequestSchema,
} from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { ListObjectsRequestSchema } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import type { GatewayConfigInput } from '../../src/gateway/index.js';
import { configMap, event, events, hello } from '../../testkit/test-agent-stream.js';

const AGENT_TOKEN = 'conformance-agent-token-0123456789';
const READER_TOKEN = 'conformance-reader-token-0123456789';

/** A gateway requiring credentials: an agent token (role agent) and a reader token (role read only). */
export const statusCaseConfig: GatewayConfigInput = {
  insecure: false,
  auth: {
    tokens: [
      { subject: 'conformance-agent', token: AGENT_TOKEN },
      { subject: 'conformance-reader', token: READER_TOKEN },
    ],
  },
  authorization: {
    rules: [
      { kind: 'token', subject: '^conformance-agent$', roles: ['agent'], accounts: ['*'] },
      { kind: 'token', subject: '^conformance-reader$', roles: ['read'] },
    ],
  },
};

/** One call and the status it must end with. */
export interface StatusCase {
  name: string;
  path: string;
  /**
   * `bidi`: the client sends its messages and keeps the request side open (never half-closes): the status must
   * arrive anyway. `unary` and `server-streaming`: the one message, then the request side ends, as such clients do.
   */
  kind: 'bidi' | 'unary' | 'server-streaming';
  /** Bearer token sent in `authorization` (none when absent). */
  token?: string;
  /** Raw `authorization` header value (overrides `token`). */
  authorization?: string;
  /** Protobuf payloads, one per gRPC message (unframed). */
  messages: Uint8Array[];
  code: Code;
  message: RegExp;
}

const AGENT = '/outpost.agent.v1.AgentService/Connect';
const agentRequest = (message: ReturnType<typeof hello>) => toBinary(ConnectRequestSchema, create(ConnectRequestSchema, { message }));
const helloBytes = agentRequest(hello('conformance-agent-1', [{ name: 'conformance-a' }]));
/** Bytes that are no protobuf message: a varint that never ends. */
const UNDECODABLE = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff]);

/** The calls; every one ends before the gateway sends a message. */
export const STATUS_CASES: readonly StatusCase[] = [
  {
    name: 'agent stream: events before the Hello',
    path: AGENT,
    kind: 'bidi',
    token: AGENT_TOKEN,
    messages: [agentRequest(events(1, [event('conformance-a', EventType.ADDED, configMap('early', 1))]))],
    code: Code.FailedPrecondition,
    message: /first message must be a hello/,
  },
  {
    name: 'agent stream: garbage as the first message',
    path: AGENT,
    kind: 'bidi',
    token: AGENT_TOKEN,
    messages: [UNDECODABLE],
    code: Code.InvalidArgument,
    message: /cannot decode the message/,
  },
  {
    name: 'agent stream: a wrong resume token',
    path: AGENT,
    kind: 'bidi',
    token: AGENT_TOKEN,
    messages: [
      agentRequest(
        hello('conformance-agent-2', [{ name: 'conformance-b' }], {
          resumeSessionId: 'no-such-session',
          resumeSessionToken: 'not-the-token',
        }),
      ),
    ],
    code: Code.Unauthenticated,
    message: /invalid session token/,
  },
  {
    name: 'agent stream: no credentials',
    path: AGENT,
    kind: 'bidi',
    messages: [helloBytes],
    code: Code.Unauthenticated,
    message: /authentication required/,
  },
  {
    name: 'agent stream: a bad token',
    path: AGENT,
    kind: 'bidi',
    token: 'not-a-known-token-0123456789',
    messages: [helloBytes],
    code: Code.Unauthenticated,
    message: /./,
  },
  {
    name: 'agent stream: a principal without the agent role',
    path: AGENT,
    kind: 'bidi',
    token: READER_TOKEN,
    messages: [helloBytes],
    code: Code.PermissionDenied,
    message: /lacks the role "agent"/,
  },
  {
    name: 'unary: GetOperation of an unknown id',
    path: '/outpost.api.v1.OperationService/GetOperation',
    kind: 'unary',
    token: READER_TOKEN,
    messages: [toBinary(GetOperationRequestSchema, create(GetOperationRequestSchema, { id: 'no-such-operation' }))],
    code: Code.NotFound,
    message: /no-such-operation/,
  },
  {
    name: 'unary: GetOperation with a malformed id',
    path: '/outpost.api.v1.OperationService/GetOperation',
    kind: 'unary',
    token: READER_TOKEN,
    messages: [toBinary(GetOperationRequestSchema, create(GetOperationRequestSchema, { id: 'bad id!' }))],
    code: Code.InvalidArgument,
    message: /id must be/,
  },
  {
    name: 'unary: SubmitOperation by a caller without the write role',
    path: '/outpost.api.v1.OperationService/SubmitOperation',
    kind: 'unary',
    token: READER_TOKEN,
    messages: [toBinary(SubmitOperationRequestSchema, create(SubmitOperationRequestSchema, {}))],
    code: Code.PermissionDenied,
    message: /lacks the role "write"/,
  },
  {
    name: 'unary: ListObjects with an undecodable request',
    path: '/outpost.api.v1.ObjectService/ListObjects',
    kind: 'unary',
    token: READER_TOKEN,
    messages: [UNDECODABLE],
    code: Code.InvalidArgument,
    message: /cannot decode the request message/,
  },
  {
    name: 'server streaming: WaitOperation of an unknown id',
    path: '/outpost.api.v1.OperationService/WaitOperation',
    kind: 'server-streaming',
    token: READER_TOKEN,
    messages: [toBinary(WaitOperationRequestSchema, create(WaitOperationRequestSchema, { id: 'no-such-operation' }))],
    code: Code.NotFound,
    message: /no-such-operation/,
  },
  {
    name: 'unary: ListObjects with no credentials',
    path: '/outpost.api.v1.ObjectService/ListObjects',
    kind: 'unary',
    messages: [toBinary(ListObjectsRequestSchema, create(ListObjectsRequestSchema, {}))],
    code: Code.Unauthenticated,
    message: /authentication required/,
  },
];

/** The `authorization` header of a case, if any. */
export function authorizationOf(c: StatusCase): string | undefined {
  return c.authorization ?? (c.token ? `Bearer ${c.token}` : undefined);
}
