/**
 * Pre-admission as a unit (src/gateway/auth/pre-admission.ts): which paths it admits from the headers, what it hands
 * the authenticator, and how it answers a refusal before reading a byte of the body — the exact answer of each
 * protocol, the reset that stops an HTTP/2 body, the bounded wait for an HTTP/1.1 body. A refusal here is the whole
 * defence against a peer making the gateway buffer bodies it never authenticated, so every branch is pinned. Plain
 * node:http and node:http2 servers on port 0 with a scripted authenticator; the linger is driven by mocked timers.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, mock, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Authenticator } from '../../src/gateway/auth/authenticator.js';
import type { RequestCredentials } from '../../src/gateway/auth/credentials.js';
import { createPreAdmission, type PreAdmission } from '../../src/gateway/auth/pre-admission.js';
import type { Principal } from '../../src/gateway/auth/principal.js';
import type { Role } from '../../src/gateway/config/schema.js';

const SERVED = [
  'outpost.api.v1.ObjectService',
  'outpost.api.v1.AccountService',
  'outpost.agent.v1.AgentService',
  'grpc.health.v1.Health',
  'Upper.Case9',
  '_under.score',
];
const LIST = '/outpost.api.v1.ObjectService/ListObjects';
const CREATE = '/outpost.api.v1.AccountService/CreateAccounts';
const LONG = 'x'.repeat(1500);
/** A bound on a hang (a refusal never answered, a stream never reset), not a timing assertion. */
const BOUND_MS = 8000;

const principalOf = (subject: string, roles: Role[]): Principal => ({ subject, method: 'token', roles: new Set(roles), accounts: {} });

/** What the scripted authenticator was asked. */
const asked: RequestCredentials[] = [];

/** Bearer `admin`: every role; `reader`: read; `boom`: a plain Error; `long`: a 1500-character refusal; else refused. */
const authenticator: Authenticator = {
  readAccess: 'authenticated',
  async authenticate(credentials) {
    asked.push(credentials);
    if (credentials.bearer === 'admin') return principalOf('admin', ['read', 'write', 'admin', 'agent']);
    if (credentials.bearer === 'reader') return principalOf('reader', ['read']);
    if (credentials.bearer === 'boom') throw new Error('not a ConnectError');
    if (credentials.bearer === 'long') throw new ConnectError(LONG, Code.Unauthenticated);
    if (credentials.browser) return principalOf('browser', ['read']);
    throw new ConnectError('authentication required', Code.Unauthenticated);
  },
  vouched: () => assert.fail('not used'),
  useSessions: () => assert.fail('not used'),
  close: () => {},
};

const preAdmit: PreAdmission = createPreAdmission(authenticator, SERVED);

/** Pre-admits a request that is only its URL and headers (no socket): for outcomes that write no answer. */
function headersOnly(url: string | undefined, headers: http.IncomingHttpHeaders = {}) {
  const req = { url, headers, method: 'POST', httpVersionMajor: 1 } as unknown as http.IncomingMessage;
  const res = new Proxy({}, { get: () => assert.fail('an admitted or passed request is not answered') });
  return preAdmit(req, res as http.ServerResponse);
}

describe('which requests pre-admission looks at', { timeout: BOUND_MS }, () => {
  test('the path of a served service and method is admitted with its principal; the query is ignored', async () => {
    asked.length = 0;
    const outcome = await headersOnly(`${LIST}?limit=1&x=/a/b`, { authorization: 'Bearer reader' });
    assert.deepEqual(outcome, { kind: 'admitted', principal: principalOf('reader', ['read']) });
    assert.deepEqual(asked, [{ secure: false, browser: undefined, bearer: 'reader' }], 'no cookie: no browser request');
    for (const url of [
      '/Upper.Case9/Method',
      '/_under.score/_method',
      '/outpost.api.v1.ObjectService/lower_case2',
      '/outpost.api.v1.ObjectService/A',
    ]) {
      assert.equal((await headersOnly(url, { authorization: 'Bearer admin' })).kind, 'admitted', url);
    }
  });

  test('anything else passes without authentication: unserved services, other path shapes, no URL', async () => {
    asked.length = 0;
    for (const url of [
      undefined,
      '',
      '/',
      '/health',
      '/outpost.api.v1.OtherService/ListObjects',
      '/outpost.api.v1.ObjectService',
      '/outpost.api.v1.ObjectService/',
      `${LIST}/`,
      `${LIST}/x`,
      `x${LIST}`,
      `/x${LIST}`,
      `http://gateway${LIST}`,
      '//ListObjects',
      '/outpost.api.v1.ObjectService/2List',
      '/outpost.api.v1.ObjectService/List.Objects',
      '/outpost.api.v1.ObjectService/List-Objects',
      '/9Upper.Case9/Method',
      '/.outpost.api.v1.ObjectService/ListObjects',
      '/outpost.api.v1.Object-Service/ListObjects',
    ]) {
      assert.deepEqual(await headersOnly(url, { authorization: 'Bearer bad' }), { kind: 'pass' }, String(url));
    }
    assert.deepEqual(asked, [], 'no credentials were looked at');
  });

  test('a method needing nothing (gRPC health) passes, even with bad credentials', async () => {
    asked.length = 0;
    for (const m of ['Check', 'Watch']) {
      assert.deepEqual(await headersOnly(`/grpc.health.v1.Health/${m}`, { authorization: 'Basic x' }), { kind: 'pass' });
    }
    assert.deepEqual(asked, []);
  });

  test("the session cookie is read for the client API only, never for an agent's stream", async () => {
    asked.length = 0;
    const cookie = { cookie: 'outpost_session=s', 'x-outpost-csrf': '1', origin: 'https://gw' };
    assert.equal((await headersOnly(LIST, cookie)).kind, 'admitted');
    assert.deepEqual(asked[0], {
      secure: false,
      browser: {
        cookie: 'outpost_session=s',
        csrf: '1',
        origin: 'https://gw',
        fetchSite: undefined,
        method: 'POST',
        path: LIST,
      },
    });
    const server = http.createServer((req, res) => {
      void preAdmit(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await h1(server, '/outpost.agent.v1.AgentService/Connect', { 'content-type': 'application/json', ...cookie });
      assert.equal(answer.status, 401, 'the cookie was not read');
      assert.equal(asked[1]!.browser, undefined);
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });
});

/** A served request's outcome, its server-side request and response (resolved when the response finished). */
interface Seen {
  outcome: Awaited<ReturnType<PreAdmission>>;
  req: http.IncomingMessage;
  finished: Promise<void>;
}

/** An HTTP/1.1 server that pre-admits each request, answers passed and admitted ones itself, and records them. */
function h1Server(seen: Seen[], readBodyFirst = false) {
  return http.createServer((req, res) => {
    const finished = new Promise<void>((resolve) => res.once('finish', resolve));
    const admit = () =>
      preAdmit(req, res).then((outcome) => {
        seen.push({ outcome, req, finished });
        if (outcome.kind === 'refused') return;
        req.resume();
        req.once('end', () => res.end(outcome.kind));
      });
    if (readBodyFirst) {
      req.resume();
      req.once('end', admit);
    } else void admit();
  });
}

/** One HTTP/1.1 request with a complete body; resolves with the answer. */
function h1(
  server: http.Server,
  path: string,
  headers: http.OutgoingHttpHeaders,
  agent: http.Agent | false = false,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { port: (server.address() as AddressInfo).port, host: '127.0.0.1', method: 'POST', path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.setTimeout(BOUND_MS, () => req.destroy(new Error(`no answer to ${path}`)));
    req.on('error', reject);
    req.end('{}');
  });
}

/** The Connect streaming end-stream message of `body`: its flags and its JSON. */
function endStream(body: Buffer): { flags: number; json: unknown } {
  assert.equal(body.readUInt32BE(1), body.length - 5, 'the envelope length is the JSON length');
  return { flags: body.readUInt8(0), json: JSON.parse(body.subarray(5).toString('utf8')) };
}

describe('refusals over HTTP/1.1, in the caller’s protocol', { timeout: BOUND_MS }, () => {
  const seen: Seen[] = [];
  const server = h1Server(seen);
  before(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)));
  after(() => {
    server.close();
    server.closeAllConnections();
  });

  test('Connect unary (and anything not gRPC nor Connect streaming): the JSON error with the HTTP status of its code', async () => {
    for (const type of ['application/json', 'application/proto', 'text/plain', undefined]) {
      const headers = type === undefined ? {} : { 'content-type': type };
      const answer = await h1(server, LIST, headers);
      assert.equal(answer.status, 401, String(type));
      assert.equal(answer.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(answer.body.toString()), { code: 'unauthenticated', message: 'authentication required' });
    }
    const denied = await h1(server, CREATE, { 'content-type': 'application/json', authorization: 'Bearer reader' });
    assert.equal(denied.status, 403);
    assert.deepEqual(JSON.parse(denied.body.toString()), {
      code: 'permission_denied',
      message: 'reader lacks the role "admin" required for outpost.api.v1.AccountService/CreateAccounts',
    });
    const outcome = seen.at(-1)!.outcome;
    assert.equal(outcome.kind, 'refused');
    assert.equal(outcome.kind === 'refused' && outcome.error.code, Code.PermissionDenied);
  });

  test('gRPC and gRPC-web: trailers-only, status and percent-encoded message in the headers, no body', async () => {
    const cases: [string, string][] = [
      ['application/grpc', 'application/grpc'],
      ['application/grpc+proto', 'application/grpc'],
      ['Application/GRPC', 'application/grpc'],
      ['application/grpc-web', 'application/grpc-web+proto'],
      ['application/grpc-web+proto', 'application/grpc-web+proto'],
      ['application/grpc-web-text', 'application/grpc-web+proto'],
      ['APPLICATION/GRPC-WEB+JSON', 'application/grpc-web+proto'],
    ];
    for (const [type, answered] of cases) {
      const answer = await h1(server, LIST, { 'content-type': type, authorization: 'Bearer nobody' });
      assert.equal(answer.status, 200, type);
      assert.equal(answer.headers['content-type'], answered, type);
      assert.equal(answer.headers['grpc-status'], String(Code.Unauthenticated), type);
      assert.equal(answer.headers['grpc-message'], 'authentication required', type);
      assert.equal(answer.body.length, 0, type);
    }
    const denied = await h1(server, CREATE, { 'content-type': 'application/grpc-web', authorization: 'Bearer reader' });
    assert.equal(denied.headers['grpc-status'], String(Code.PermissionDenied));
    assert.equal(denied.headers['grpc-message'], 'reader lacks the role "admin" required for outpost.api.v1.AccountService/CreateAccounts');
    const long = await h1(server, LIST, { 'content-type': 'application/grpc', authorization: 'Bearer long' });
    assert.equal(long.headers['grpc-message'], `${'x'.repeat(1000)}%E2%80%A6 (500 more characters)`, 'cut, then percent-encoded');
  });

  test('Connect streaming: 200 and one end-stream message carrying the error, in the codec asked for', async () => {
    const cases: [string, string][] = [
      ['application/connect+proto', 'application/connect+proto'],
      ['Application/Connect+Proto', 'application/connect+proto'],
      ['application/connect+proto; charset=binary', 'application/connect+proto'],
      ['application/connect+json', 'application/connect+json'],
      ['application/connect+other', 'application/connect+json'],
    ];
    for (const [type, answered] of cases) {
      const answer = await h1(server, LIST, { 'content-type': type });
      assert.equal(answer.status, 200, type);
      assert.equal(answer.headers['content-type'], answered, type);
      assert.deepEqual(endStream(answer.body), {
        flags: 2,
        json: { error: { code: 'unauthenticated', message: 'authentication required' } },
      });
    }
  });

  test('a failure that is no ConnectError is refused UNAUTHENTICATED as "authentication failed"', async () => {
    const answer = await h1(server, LIST, { 'content-type': 'application/json', authorization: 'Bearer boom' });
    assert.equal(answer.status, 401);
    assert.deepEqual(JSON.parse(answer.body.toString()), { code: 'unauthenticated', message: 'authentication failed' });
    const outcome = seen.at(-1)!.outcome;
    assert.ok(outcome.kind === 'refused');
    assert.equal(outcome.error.code, Code.Unauthenticated);
    assert.equal(outcome.error.rawMessage, 'authentication failed');
  });

  test('a refusal too long to send is cut; the outcome keeps the error as thrown', async () => {
    const answer = await h1(server, LIST, { 'content-type': 'application/json', authorization: 'Bearer long' });
    assert.equal(JSON.parse(answer.body.toString()).message, `${'x'.repeat(1000)}… (500 more characters)`);
    const outcome = seen.at(-1)!.outcome;
    assert.ok(outcome.kind === 'refused');
    assert.equal(outcome.error.rawMessage, LONG);
  });
});

describe('the body of a refused HTTP/1.1 request', { timeout: BOUND_MS }, () => {
  const LINGER_MS = 2000;
  const seen: Seen[] = [];
  const server = h1Server(seen);
  const readFirst: Seen[] = [];
  const readFirstServer = h1Server(readFirst, true);
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => readFirstServer.listen(0, '127.0.0.1', resolve));
  });
  after(() => {
    mock.timers.reset();
    for (const s of [server, readFirstServer]) {
      s.close();
      s.closeAllConnections();
    }
  });

  /** Sends the headers and part of a chunked body; resolves with the client request and the answer's status. */
  function partial(agent: http.Agent, path = LIST): Promise<{ req: http.ClientRequest; status: number }> {
    return new Promise((resolve, reject) => {
      const req = http.request({
        port: (server.address() as AddressInfo).port,
        host: '127.0.0.1',
        method: 'POST',
        path,
        agent,
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve({ req, status: res.statusCode! }));
      });
      req.on('error', reject);
      req.write('{"part":');
    });
  }

  /**
   * Runs `body` with setTimeout mocked (the linger timer fires only when the test ticks it) and one kept-alive
   * connection, both undone after it.
   */
  async function onOneConnection(body: (agent: http.Agent) => Promise<void>): Promise<void> {
    mock.timers.enable({ apis: ['setTimeout'] });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await body(agent);
    } finally {
      mock.timers.reset();
      agent.destroy();
    }
  }

  test('a body that stalls has its connection closed LINGER_MS after the answer, not before', async () =>
    onOneConnection(async (agent) => {
      const { req, status } = await partial(agent);
      assert.equal(status, 401);
      const last = seen.at(-1)!;
      await last.finished;
      req.on('error', () => {});
      mock.timers.tick(LINGER_MS - 1);
      assert.equal(last.req.socket.destroyed, false);
      mock.timers.tick(1);
      assert.equal(last.req.socket.destroyed, true);
    }));

  test('a body that ends in time keeps the connection: its next requests are answered on it', async () =>
    onOneConnection(async (agent) => {
      const sockets = new Set<unknown>();
      for (let i = 0; i < 3; i++) {
        const { req, status } = await partial(agent);
        assert.equal(status, 401);
        const last = seen.at(-1)!;
        await last.finished;
        const ended = new Promise((resolve) => last.req.once('end', resolve));
        req.end('1}');
        await ended;
        mock.timers.tick(10 * LINGER_MS);
        assert.equal(last.req.socket.destroyed, false, `request ${i}`);
        sockets.add(last.req.socket);
      }
      assert.equal(sockets.size, 1, 'one connection carried them all');
      const admitted = await h1(server, LIST, { authorization: 'Bearer reader' }, agent);
      assert.equal(admitted.body.toString(), 'admitted');
      assert.equal(sockets.has(seen.at(-1)!.req.socket), true);
    }));

  test('a request whose body had fully arrived before the refusal keeps its connection', async () =>
    onOneConnection(async (agent) => {
      const answer = await h1(readFirstServer, LIST, { 'content-type': 'application/json' }, agent);
      assert.equal(answer.status, 401);
      const last = readFirst.at(-1)!;
      await last.finished;
      mock.timers.tick(10 * LINGER_MS);
      assert.equal(last.req.socket.destroyed, false);
    }));
});

describe('refusals over HTTP/2', { timeout: BOUND_MS }, () => {
  const seen: Awaited<ReturnType<PreAdmission>>[] = [];
  const server = http2.createServer((req, res) => {
    void preAdmit(req, res).then((outcome) => {
      seen.push(outcome);
      if (outcome.kind !== 'refused') res.end(outcome.kind);
    });
  });
  let client: http2.ClientHttp2Session;
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  after(() => {
    client.destroy();
    server.close();
  });

  /**
   * Sends the headers and part of a body and never ends it; resolves with the answer once the stream closed (which,
   * with the body unfinished, only the server's reset can do; bounded so a missing reset fails instead of hanging).
   */
  function unfinished(headers: http2.OutgoingHttpHeaders): Promise<{ headers: http2.IncomingHttpHeaders; body: Buffer; rstCode: number }> {
    return new Promise((resolve, reject) => {
      const stream = client.request({ ':method': 'POST', ':path': LIST, ...headers }, { endStream: false });
      const chunks: Buffer[] = [];
      let answer: http2.IncomingHttpHeaders = {};
      const bound = setTimeout(() => reject(new Error('the stream was not reset')), BOUND_MS);
      stream.on('response', (h) => (answer = h));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', () => {});
      stream.on('close', () => {
        clearTimeout(bound);
        resolve({ headers: answer, body: Buffer.concat(chunks), rstCode: stream.rstCode });
      });
      stream.write('{"part":');
    });
  }

  test('Connect unary: the whole JSON error, then the stream is reset with NO_ERROR', async () => {
    const answer = await unfinished({ 'content-type': 'application/json' });
    assert.equal(answer.headers[':status'], 401);
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(answer.body.toString()), { code: 'unauthenticated', message: 'authentication required' });
    assert.equal(answer.rstCode, http2.constants.NGHTTP2_NO_ERROR);
    assert.equal(seen.at(-1)!.kind, 'refused');
  });

  test('Connect streaming: the end-stream message whole, then the reset', async () => {
    const answer = await unfinished({ 'content-type': 'application/connect+proto', authorization: 'Bearer nobody' });
    assert.equal(answer.headers[':status'], 200);
    assert.equal(answer.headers['content-type'], 'application/connect+proto');
    assert.deepEqual(endStream(answer.body), {
      flags: 2,
      json: { error: { code: 'unauthenticated', message: 'authentication required' } },
    });
    assert.equal(answer.rstCode, http2.constants.NGHTTP2_NO_ERROR);
  });

  test('gRPC: trailers-only, then the reset', async () => {
    const answer = await unfinished({ 'content-type': 'application/grpc' });
    assert.equal(answer.headers[':status'], 200);
    assert.equal(answer.headers['content-type'], 'application/grpc');
    assert.equal(answer.headers['grpc-status'], String(Code.Unauthenticated));
    assert.equal(answer.headers['grpc-message'], 'authentication required');
    assert.equal(answer.body.length, 0);
    assert.equal(answer.rstCode, http2.constants.NGHTTP2_NO_ERROR);
  });

  test('a refused stream leaves its connection alone: the session serves calls long after', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const refused = await unfinished({ 'content-type': 'application/json' });
      assert.equal(refused.headers[':status'], 401);
      mock.timers.tick(60_000);
      assert.equal(client.destroyed, false);
      const stream = client.request({ ':method': 'POST', ':path': LIST, authorization: 'Bearer reader' });
      stream.end('{}');
      const chunks: Buffer[] = [];
      for await (const c of stream) chunks.push(c as Buffer);
      assert.equal(Buffer.concat(chunks).toString(), 'admitted');
    } finally {
      mock.timers.reset();
    }
  });

  test('an admitted call goes on with its body', async () => {
    const stream = client.request({ ':method': 'POST', ':path': LIST, authorization: 'Bearer reader' });
    stream.end('{}');
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    assert.equal(Buffer.concat(chunks).toString(), 'admitted');
  });
});
