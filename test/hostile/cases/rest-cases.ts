/**
 * Hostile requests to every REST route: bodies (mutated JSON, hostile names, bodies over the limit with and without a
 * Content-Length, wrong or missing content types, no body) and paths (parameters with quotes, SQL, NUL, traversal,
 * unicode and raw bytes; doubled, trailing and dot segments; very long paths; hostile query values; every method),
 * over HTTP/1.1 and over HTTP/2 on the gRPC port.
 */
import type { Rng } from '../../../testkit/rng.js';
import type { RestRoute } from '../../../testkit/rest-routes.js';
import { guarded, headerSafe, type CaseResult, type HostileCase, type HostileCategory } from '../hostile-case.js';
import { hostileString, randomText } from '../hostile-strings.js';
import { ACCOUNT_BODY_LIMIT, type HostileTarget } from '../hostile-target.js';
import { mutateJson, type Json } from '../json-mutations.js';
import { uniqueTag } from '../agent-messages.js';
import { http1Request, http2Request } from '../raw-http.js';
import { judgeRest } from '../reply-verdict.js';
import { collectStrings } from '../rpc-call.js';
import { BODY_ROUTES, fillPath, paramNames, REST_ROUTES, sampleRest } from '../rest-samples.js';

const encoder = new TextEncoder();
const REPLICA_BODY_LIMIT = 4 * 1024 * 1024;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'FOO'];

/** A request as a case sends it. */
interface RestRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The body; a function for large ones, built when the case runs so a long run does not hold every body at once. */
  chunks: Uint8Array[] | (() => Uint8Array[]);
  chunked?: boolean;
  http2?: boolean;
  /** Strings an accepted request may have written under. */
  names: string[];
}

function restCase(category: HostileCategory, name: string, request: RestRequest): HostileCase {
  return {
    category,
    name,
    run: (target: HostileTarget) =>
      guarded(name, async (): Promise<CaseResult> => {
        const send = request.http2 ? http2Request : http1Request;
        const chunks = typeof request.chunks === 'function' ? request.chunks() : request.chunks;
        const reply = await send(request.http2 ? target.grpcUrl : target.httpUrl, { ...request, chunks, timeoutMs: 30_000 });
        const result = judgeRest(reply, name, request.method === 'HEAD', request.path);
        return result.verdict.kind === 'accepted' ? { ...result, owned: request.names } : result;
      }),
  };
}

/** Percent-encodes the UTF-8 bytes of `text` except unreserved characters (lone surrogates become U+FFFD). */
function percentEncode(text: string): string {
  let out = '';
  for (const byte of encoder.encode(text)) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function methodFor(rng: Rng, route: RestRoute): string {
  if (route.method !== 'ALL') return route.method;
  const registered = new Set(REST_ROUTES.filter((r) => r.path === route.path).map((r) => r.method));
  const others = METHODS.filter((m) => !registered.has(m) && !(m === 'HEAD' && registered.has('GET')));
  return rng.pick(others.length > 0 ? others : METHODS);
}

function bodyCase(rng: Rng): HostileCase {
  const route = rng.pick(BODY_ROUTES);
  const tag = uniqueTag(rng);
  const sample = sampleRest(route, rng, tag);
  const path = fillPath(route.path, Object.fromEntries(Object.entries(sample.params ?? {}).map(([k, v]) => [k, percentEncode(v)])));
  const limit = route.path.startsWith('/armory/accounts') ? ACCOUNT_BODY_LIMIT : REPLICA_BODY_LIMIT;
  const json = { 'content-type': 'application/json' };
  const base = sample.body as Json;
  const http2 = rng.chance(0.2);
  const c = 'rest: bodies' as const;
  const where = `${route.method} ${route.path}${http2 ? ' (h2)' : ''}`;
  const choice = rng.int(0, 9);
  if (choice < 6) {
    const { body, how } = mutateJson(rng, base);
    let names: string[] = [];
    try {
      names = collectStrings(JSON.parse(Buffer.from(body).toString('utf8')));
    } catch {
      // not JSON: nothing could have been written under any name
    }
    return restCase(c, `${where}: ${how}`, { method: route.method, path, headers: json, chunks: [body], http2, names });
  }
  if (choice === 6) {
    const size = limit + rng.int(1, limit === REPLICA_BODY_LIMIT ? 1000 : 200_000);
    const padded = () => [
      encoder.encode(
        JSON.stringify(Array.isArray(base) ? [...base, 'p'.repeat(size)] : { ...(base as object), padding: 'p'.repeat(size) }),
      ),
    ];
    const chunked = rng.chance(0.5);
    return restCase(c, `${where}: body over the limit by a ${size}-byte string${chunked ? ', chunked' : ''}`, {
      method: route.method,
      path,
      headers: json,
      chunks: padded,
      chunked,
      http2,
      names: [],
    });
  }
  if (choice === 7) {
    const type = rng.pick([
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/jsonx',
      'application/json5',
      'application/xml',
      '',
      headerSafe(hostileString(rng)).slice(0, 100),
    ]);
    const headers: Record<string, string> = type === '' ? {} : { 'content-type': type };
    return restCase(c, `${where}: content-type ${JSON.stringify(type.slice(0, 30))}`, {
      method: route.method,
      path,
      headers,
      chunks: [encoder.encode(JSON.stringify(base))],
      http2,
      names: [],
    });
  }
  if (choice === 8) return restCase(c, `${where}: no body`, { method: route.method, path, headers: json, chunks: [], http2, names: [] });
  const charset = rng.pick(['utf-16', 'latin1', 'x-evil', '']);
  return restCase(c, `${where}: charset ${JSON.stringify(charset)} on a latin1 body`, {
    method: route.method,
    path,
    headers: { 'content-type': `application/json; charset=${charset}` },
    chunks: [Buffer.from(JSON.stringify(base).replace(/"hx-/, '"hx-\u00e9'), 'latin1')],
    http2,
    names: [],
  });
}

/** A hostile value for a path parameter, already encoded for the path. */
function hostileSegment(rng: Rng): { encoded: string; decoded: string } {
  switch (rng.int(0, 5)) {
    case 0:
    case 1: {
      const text = hostileString(rng);
      return { encoded: percentEncode(text), decoded: text };
    }
    case 2: {
      const raw = rng.pick([
        '..',
        '.',
        '%00',
        '%2e%2e%2f',
        '..%2f..%2f',
        '%252e%252e',
        '%2F',
        '%5C',
        '%',
        '%zz',
        '%c0%af',
        '%ef%bf%bf',
        '%ed%a0%80',
      ]);
      return { encoded: raw, decoded: raw };
    }
    case 3: {
      const length = rng.pick([254, 1000, 4000, rng.int(5000, 12_000)]);
      return { encoded: 'a'.repeat(length), decoded: 'a'.repeat(length) };
    }
    case 4: {
      const bytes = Array.from({ length: rng.int(1, 8) }, () => String.fromCharCode(rng.int(0x80, 0xff))).join('');
      return { encoded: bytes, decoded: bytes };
    }
    default: {
      const text = randomText(rng, 30);
      return { encoded: percentEncode(text), decoded: text };
    }
  }
}

function pathCase(rng: Rng): HostileCase {
  const c = 'rest: paths' as const;
  const http2 = rng.chance(0.2);
  if (rng.chance(0.15)) {
    const path = rng.pick([
      '/..%2f',
      '/%00',
      '/armory/accounts/%00',
      '//',
      '/armory/../health',
      '/armory/accounts/../../health',
      '/assets/../../package.json',
      '/assets/%2e%2e/%2e%2e/package.json',
      '/assets/..%2f..%2fpackage.json',
      '/index.html%00.js',
      '/armory/accounts/x%2fy',
      '/ARMORY/ACCOUNTS',
      '/armory//accounts',
      '/armory/accounts/;drop',
      '/*',
      `/${'x/'.repeat(rng.int(100, 2000))}`,
      `/armory/accounts/${'%'.repeat(rng.int(1, 50))}`,
    ]);
    const method = rng.pick(METHODS);
    return restCase(c, `${method} ${path.slice(0, 60)}${http2 ? ' (h2)' : ''}`, {
      method,
      path,
      headers: {},
      chunks: [],
      http2,
      names: [],
    });
  }
  const route = rng.pick(REST_ROUTES);
  const tag = uniqueTag(rng);
  const sample = sampleRest(route, rng, tag);
  const method = rng.chance(0.8) ? methodFor(rng, route) : rng.pick(METHODS);
  const names: string[] = [];
  const encoded: Record<string, string> = {};
  for (const p of paramNames(route.path)) {
    if (rng.chance(0.8)) {
      const seg = hostileSegment(rng);
      encoded[p] = seg.encoded;
      names.push(seg.decoded);
    } else encoded[p] = percentEncode(sample.params?.[p] ?? 'x');
  }
  let path = fillPath(route.path, encoded);
  const shape = rng.int(0, 6);
  if (shape === 0) path += '/';
  else if (shape === 1) path = path.replace(/\//g, '//');
  else if (shape === 2) path = path.replace('/armory', '/armory/./');
  else if (shape === 3) path += `;${percentEncode(hostileString(rng))}`;
  let query = sample.query ?? '';
  if (rng.chance(0.4)) {
    const key = rng.pick(['page', 'limit', 'items', 'name', 'connect', 'encoding', 'message', percentEncode(hostileString(rng))]);
    query = `${query ? `${query}&` : ''}${key}=${percentEncode(hostileString(rng))}${rng.chance(0.3) ? `&${key}=2` : ''}`;
  }
  const full = query ? `${path}?${query}` : path;
  const withBody = sample.body !== undefined && method === route.method;
  const chunks = withBody ? [encoder.encode(JSON.stringify(sample.body))] : [];
  if (withBody) names.push(...collectStrings(sample.body!));
  const headers: Record<string, string> = withBody ? { 'content-type': 'application/json' } : {};
  return restCase(c, `${method} ${route.path}${http2 ? ' (h2)' : ''} as ${full.slice(0, 70)}`, {
    method,
    path: full,
    headers,
    chunks,
    http2,
    names,
  });
}

/** Case factories of the REST categories. */
export const REST_CASES = {
  'rest: bodies': bodyCase,
  'rest: paths': pathCase,
} satisfies Partial<Record<HostileCategory, (rng: Rng) => HostileCase>>;
