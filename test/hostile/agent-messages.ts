/**
 * Agent stream messages for the hostile cases: valid Hellos and event batches under names unique to one case (so
 * concurrent cases never meet, and a bit flip cannot turn one case's names into another's), the gRPC frame of a
 * message, the names a stream could have registered (read back from the bytes actually sent), and the agent-stream
 * judge, which adds those names to a result once the gateway welcomed the stream.
 */
import { create, fromBinary, fromJson, toBinary, type JsonValue, type MessageInitShape } from '@bufbuild/protobuf';
import { gunzipSync } from 'node:zlib';
import {
  ConnectRequestSchema,
  ConnectResponseSchema,
  type EventType,
  type ConnectRequest,
  type Hello,
} from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { encodeMessage } from '../../src/gateway/grpc/grpc-wire.js';
import type { Rng } from '../../testkit/rng.js';
import type { CaseResult } from './hostile-case.js';
import { frames, judgeReply, type ReplyProtocol } from './reply-verdict.js';
import type { RawReply } from './raw-http.js';

/** The agent stream's method path. */
export const AGENT_PATH = '/outpost.agent.v1.AgentService/Connect';

type RequestInit = MessageInitShape<typeof ConnectRequestSchema>;

/** 16 random hex digits: names built on them differ from every other case's in many characters. */
export function uniqueTag(rng: Rng): string {
  let out = '';
  for (let i = 0; i < 16; i++) out += rng.int(0, 15).toString(16);
  return out;
}

/** The names a case with `tag` uses: one agent id and `count` account names. */
export function caseNames(tag: string, count: number): { agentId: string; accounts: string[] } {
  return { agentId: `hx-agent-${tag}`, accounts: Array.from({ length: count }, (_, i) => `hx-${tag}-${i}`) };
}

const KINDS = [
  { apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true },
  { apiVersion: 'apps/v1', kind: 'Deployment', resource: 'deployments', namespaced: true },
  { apiVersion: 'v1', kind: 'Namespace', resource: 'namespaces', namespaced: false },
];

/** A valid Hello for the case's names, with random but well-formed details. */
export function validHello(rng: Rng, tag: string, accountCount = rng.int(1, 3)): ConnectRequest {
  const { agentId, accounts } = caseNames(tag, accountCount);
  return create(ConnectRequestSchema, {
    message: {
      case: 'hello',
      value: {
        agentId,
        zone: rng.pick(['test', 'eu-1', 'zone-a']),
        version: '1.0.0',
        replicas: rng.int(1, 3),
        accounts: accounts.map((name) => ({
          name,
          apiHost: `https://cluster-${name}:6443`,
          caFingerprint: 'ab'.repeat(32),
          kubernetesVersion: 'v1.30.0',
          namespaces: rng.chance(0.5) ? [] : ['default', 'web'],
          kinds: KINDS.slice(0, rng.int(1, KINDS.length)),
          skippedKinds: rng.chance(0.3) ? [{ apiVersion: 'v1', kind: 'Secret', reason: 'forbidden' }] : [],
          properties: (rng.chance(0.3) ? { team: 'a' } : {}) as Record<string, string>,
        })),
      },
    },
  });
}

/** A ConfigMap event of `account` (identity fields consistent with the object). */
export function configMapEvent(account: string, type: EventType, name: string, rv: number) {
  const object = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: String(rv) },
    data: { v: String(rv) },
  };
  return {
    account,
    type,
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: 'default',
    name,
    uid: `uid-${name}`,
    resourceVersion: String(rv),
    objectJson: new TextEncoder().encode(JSON.stringify(object)),
    watchNamespace: '',
  };
}

/** A message from its init shape. */
export function request(message: RequestInit['message']): ConnectRequest {
  return create(ConnectRequestSchema, { message } as RequestInit);
}

/** The gRPC frame (uncompressed) of a message or of raw payload bytes. */
export function frameOf(message: ConnectRequest | Uint8Array): Uint8Array {
  return encodeMessage(message instanceof Uint8Array ? message : toBinary(ConnectRequestSchema, message));
}

/**
 * The agent id and account names of every Hello among `payloads` (binary protobuf, gzip-compressed protobuf, or JSON
 * text): what a stream that sent them could have registered.
 */
function helloNames(payloads: readonly (Uint8Array | string)[]): string[] {
  const names: string[] = [];
  for (const payload of payloads) {
    const hello = decodeHello(payload);
    if (hello) names.push(hello.agentId, ...hello.accounts.map((a) => a.name));
  }
  return names;
}

function decodeHello(payload: Uint8Array | string): Hello | undefined {
  const attempts: (() => ConnectRequest)[] =
    typeof payload === 'string'
      ? [() => fromJson(ConnectRequestSchema, JSON.parse(payload) as JsonValue)]
      : [() => fromBinary(ConnectRequestSchema, payload), () => fromBinary(ConnectRequestSchema, gunzipSync(payload))];
  for (const attempt of attempts) {
    try {
      const message = attempt();
      if (message.message.case === 'hello') return message.message.value;
    } catch {
      // not this encoding
    }
  }
  return undefined;
}

/** True when a reply (gRPC binary, gRPC/Connect JSON, or Connect binary) carried a Welcome. */
function repliedWelcome(reply: RawReply): boolean {
  const json = /json/.test(reply.headers['content-type'] ?? '');
  for (const frame of frames(reply.body)) {
    if (frame.flags !== 0) continue;
    try {
      if (json) {
        if ('welcome' in (JSON.parse(Buffer.from(frame.data).toString('utf8')) as object)) return true;
      } else if (fromBinary(ConnectResponseSchema, frame.data).message.case === 'welcome') return true;
    } catch {
      // not a response message
    }
  }
  return false;
}

/** The protocol a reply speaks, from its content type (a bodiless or JSON reply is read as Connect unary/REST). */
export function protocolOfReply(reply: RawReply): ReplyProtocol {
  const type = reply.headers['content-type'] ?? '';
  if (/^application\/grpc-web/.test(type)) return 'grpc-web';
  if (/^application\/grpc/.test(type)) return 'grpc';
  if (/^application\/connect\+/.test(type)) return 'connect-stream';
  return 'connect';
}

/**
 * Judges an agent stream's reply. A welcomed stream registered the names of the Hellos it sent: they are the
 * case's own from then on, whatever a later message did.
 */
export function judgeAgentStream(reply: RawReply, sentPayloads: readonly (Uint8Array | string)[], via: string): CaseResult {
  const result = judgeReply(protocolOfReply(reply), reply, via);
  if (repliedWelcome(reply) || result.verdict.kind === 'accepted') return { ...result, owned: helloNames(sentPayloads) };
  return result;
}
