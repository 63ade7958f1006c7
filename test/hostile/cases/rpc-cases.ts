/**
 * Hostile calls to every method of every service served through connect-node (objects, accounts, operations, fleet,
 * health, reflection), in every wire form: mutated and random JSON, mutated and random binary protobuf, and protocol
 * abuse — wrong content types and HTTP methods, bodies over the 4 MiB limit, broken envelopes, too many or too few
 * messages for a unary call, malformed protocol headers, unknown methods, malformed credentials.
 */
import { fromJson, toBinary, type DescMethod } from '@bufbuild/protobuf';
import { gzipSync } from 'node:zlib';
import { encodeMessage } from '../../../src/gateway/grpc/grpc-wire.js';
import type { Rng } from '../../../testkit/rng.js';
import { concat, mutateBytes, randomBytes } from '../byte-mutations.js';
import { headerSafe, type HostileCase, type HostileCategory } from '../hostile-case.js';
import { hostileString } from '../hostile-strings.js';
import { mutateJson, randomJson, type Json } from '../json-mutations.js';
import { uniqueTag } from '../agent-messages.js';
import { BINARY_WIRES, callRpc, JSON_WIRES, type RpcWire } from '../rpc-call.js';
import { RPC_METHODS, sampleRequest } from '../rpc-samples.js';

const encoder = new TextEncoder();

function label(method: DescMethod): string {
  return `${method.parent.name}/${method.name}`;
}

/** A case calling `method`; a large `body` is a function, built when the case runs so a long run holds one at a time. */
function rpcCase(
  category: HostileCategory,
  name: string,
  method: DescMethod,
  wire: RpcWire,
  body: Uint8Array | (() => Uint8Array),
  options?: Parameters<typeof callRpc>[5],
): HostileCase {
  return { category, name, run: (target) => callRpc(target, method, wire, typeof body === 'function' ? body() : body, name, options) };
}

function mutatedJsonCase(rng: Rng): HostileCase {
  const method = rng.pick(RPC_METHODS);
  const wire = rng.pick(JSON_WIRES);
  const base = sampleRequest(method, rng, uniqueTag(rng)) as Json;
  if (rng.chance(0.15)) {
    const body = encoder.encode(JSON.stringify(randomJson(rng)));
    return rpcCase('rpc: mutated JSON', `${label(method)} ${wire}: random JSON`, method, wire, body);
  }
  const { body, how } = mutateJson(rng, base);
  return rpcCase('rpc: mutated JSON', `${label(method)} ${wire}: ${how}`, method, wire, body);
}

function mutatedProtobufCase(rng: Rng): HostileCase {
  const method = rng.pick(RPC_METHODS);
  const wire = rng.pick(BINARY_WIRES);
  const base = toBinary(method.input, fromJson(method.input, sampleRequest(method, rng, uniqueTag(rng))));
  if (rng.chance(0.15)) {
    const body = randomBytes(rng, 200);
    return rpcCase('rpc: mutated protobuf', `${label(method)} ${wire}: ${body.length} random bytes`, method, wire, body);
  }
  const { bytes, how } = mutateBytes(rng, base);
  return rpcCase('rpc: mutated protobuf', `${label(method)} ${wire}: ${how}`, method, wire, bytes);
}

function protocolCase(rng: Rng): HostileCase {
  const method = rng.pick(RPC_METHODS);
  const tag = uniqueTag(rng);
  const json = encoder.encode(JSON.stringify(sampleRequest(method, rng, tag)));
  const binary = toBinary(method.input, fromJson(method.input, sampleRequest(method, rng, tag)));
  const c = 'rpc: protocol' as const;
  const m = label(method);
  const value = () => headerSafe(hostileString(rng)).slice(0, 200);
  switch (rng.int(0, 10)) {
    case 0: {
      const type = rng.pick([
        'text/plain',
        'application/xml',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/proto+json',
        value(),
      ]);
      return rpcCase(c, `${m}: content-type ${JSON.stringify(type.slice(0, 40))}`, method, 'connect-json', json, {
        headers: { 'content-type': type },
      });
    }
    case 1: {
      const httpMethod = rng.pick(['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);
      return rpcCase(c, `${m}: HTTP ${httpMethod}`, method, 'connect-json', json, { method: httpMethod });
    }
    case 2: {
      const size = 4 * 1024 * 1024 + rng.int(1, 100_000);
      const huge = () => encoder.encode(JSON.stringify({ padding: 'x'.repeat(size) }));
      const wire = rng.pick<RpcWire>(['connect-json', 'grpc-json']);
      return rpcCase(c, `${m} ${wire}: ${size + 14}-byte body`, method, wire, huge);
    }
    case 3: {
      const header = rng.pick([
        'connect-protocol-version',
        'connect-timeout-ms',
        'content-encoding',
        'connect-content-encoding',
        'accept-encoding',
        'grpc-timeout',
      ]);
      const v = rng.pick(['2', '-1', '99999999999999999999', 'gzip', 'br', 'zstd', '', value()]);
      const wire = header === 'grpc-timeout' ? 'grpc' : 'connect-json';
      return rpcCase(c, `${m} ${wire}: ${header}: ${JSON.stringify(v.slice(0, 30))}`, method, wire, wire === 'grpc' ? binary : json, {
        headers: { [header]: v },
      });
    }
    case 4: {
      const wire = rng.pick<RpcWire>(['grpc', 'grpc-web']);
      const count = rng.pick([0, 2, 3]);
      const chunks = count === 0 ? [] : [concat(...Array.from({ length: count }, () => encodeMessage(binary)))];
      return rpcCase(c, `${m} ${wire}: ${count} messages`, method, wire, binary, { rawChunks: chunks });
    }
    case 5: {
      const frame = encodeMessage(binary);
      const at = rng.int(1, frame.length - 1);
      const wire = rng.pick<RpcWire>(['grpc', 'grpc-web']);
      return rpcCase(c, `${m} ${wire}: frame cut at ${at}/${frame.length}`, method, wire, binary, { rawChunks: [frame.subarray(0, at)] });
    }
    case 6: {
      const wire = rng.pick<RpcWire>(['grpc', 'grpc-web']);
      const flags = rng.pick([1, 2, 0x80, 0xff]);
      const frame = Buffer.from(encodeMessage(binary));
      frame[0] = flags;
      return rpcCase(c, `${m} ${wire}: frame flags 0x${flags.toString(16)}`, method, wire, binary, { rawChunks: [frame] });
    }
    case 7: {
      const bomb = gzipSync(Buffer.alloc(rng.pick([5, 16]) * 1024 * 1024));
      const garbage = rng.chance(0.5);
      return rpcCase(
        c,
        `${m} connect-json: content-encoding gzip, ${garbage ? 'not gzip' : 'a gzip bomb'}`,
        method,
        'connect-json',
        garbage ? randomBytes(rng, 64) : bomb,
        { headers: { 'content-encoding': 'gzip' } },
      );
    }
    case 8: {
      const other = rng.pick(['NoSuchMethod', method.name.toLowerCase(), `${method.name}/extra`, '', `${method.name}%00`]);
      const path = rng.chance(0.5)
        ? `/${method.parent.typeName}/${other}`
        : `/${rng.pick(['outpost.api.v2.ObjectService', 'outpost.api.v1.Secrets', '..', 'grpc.health.v1.Health.Check'])}/${method.name}`;
      return rpcCase(c, `POST ${path.slice(0, 60)}`, method, 'connect-json', json, { path });
    }
    case 9: {
      const authorization = rng.pick([
        'Bearer',
        'Bearer ',
        `Bearer ${value()}`,
        'Basic dXNlcjpwYXNz',
        value(),
        `Bearer ${'y'.repeat(rng.int(5000, 60_000))}`,
        'Bearer a b c',
      ]);
      const wire = rng.pick<RpcWire>(['connect-json', 'grpc']);
      return rpcCase(
        c,
        `${m} ${wire}: authorization ${JSON.stringify(authorization.slice(0, 30))}`,
        method,
        wire,
        wire === 'grpc' ? binary : json,
        { headers: { authorization } },
      );
    }
    default: {
      const query = rng.pick([
        'encoding=proto&message=!!!',
        'encoding=json',
        'encoding=json&base64=1&message=%%%',
        'encoding=json&compression=gzip&message=x',
        `encoding=json&message=${encodeURIComponent('{"x":'.repeat(300))}`,
        'encoding=json&message=%7B%7D&connect=v9',
      ]);
      const path = `/${method.parent.typeName}/${method.name}?${query}`;
      return rpcCase(c, `${m} GET ?${query.slice(0, 50)}`, method, 'connect-get', json, { path, method: 'GET', rawChunks: [] });
    }
  }
}

/** Case factories of the RPC categories. */
export const RPC_CASES = {
  'rpc: mutated JSON': mutatedJsonCase,
  'rpc: mutated protobuf': mutatedProtobufCase,
  'rpc: protocol': protocolCase,
} satisfies Partial<Record<HostileCategory, (rng: Rng) => HostileCase>>;
