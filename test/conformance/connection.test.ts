/**
 * Page sections 1 (connection, authentication) and 9 rows E1–E8, E11, E12 and E19 as the wire shows them: each
 * transport-level violation ends the call with its row's exact status; errors before any response message are one
 * Trailers-Only HEADERS frame, errors after a message arrive as trailers; `grpc-message` is percent-encoded and at
 * most 1000 characters; the identity's account patterns and the first claim's binding decide REFUSED verdicts.
 */
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { encodeRequest, helloAndWelcome, openAgentStream, type AgentStream } from './agent-stream.js';
import { decodeGrpcMessage, frameMessage, type CallOutcome } from './grpc-wire.js';
import { helloFor, startAuthenticatedGateway, TOKENS, type AuthenticatedGateway } from './harness.js';
import { added, batch, cm } from './scripted.js';
import { rowTest, statusName } from './status-cases.js';

const MiB = 1024 * 1024;

/** Asserts the page's error form for a call that failed before any response message: Trailers-Only. */
function assertTrailersOnly(o: CallOutcome): void {
  assert.equal(o.messages, 0, 'no response message came before the error');
  assert.equal(
    o.form,
    'trailers-only',
    `section 1: an error before any response message is one HEADERS frame with :status 200, content-type, grpc-status, grpc-message and END_STREAM; got ${o.form} (${statusName(o.grpcStatus)} "${o.grpcMessage}")`,
  );
  assert.equal(o.httpStatus, 200);
  assert.match(o.headers['content-type'] ?? '', /^application\/grpc/);
  assert.ok(
    o.headers['grpc-status'] !== undefined && o.headers['grpc-message'] !== undefined,
    'grpc-status and grpc-message in the single HEADERS block',
  );
}

describe('connection and authentication (sections 1, 9)', { concurrency: false }, () => {
  let t: AuthenticatedGateway;
  const open: AgentStream[] = [];
  before(async () => {
    t = await startAuthenticatedGateway();
  });
  after(async () => {
    for (const s of open) s.abort();
    await t?.close();
  });
  /** Opens a stream with `bearer` (null: no credentials). */
  const stream = (bearer: string | null = TOKENS.agentA, headers: Record<string, string> = {}) => {
    const s = openAgentStream(t.gateway.grpcUrl, { bearer: bearer ?? undefined, headers });
    open.push(s);
    return s;
  };

  rowTest('E1', 'a grpc-encoding other than identity or gzip', async (expect) => {
    const s = stream(TOKENS.agentA, { 'grpc-encoding': 'br' });
    s.send(helloFor('agent-e1', ['conf-e1']));
    expect(await s.ended);
  });

  rowTest('E2', 'a message flagged compressed on a stream without grpc-encoding', async (expect) => {
    const s = stream();
    s.raw.writeMessage(encodeRequest(helloFor('agent-e2', ['conf-e2'])), { compressed: true, raw: true });
    expect(await s.ended);
  });

  rowTest('E3', 'a malformed grpc-timeout header (not digits + unit, more than 8 digits, unknown unit)', async (expect) => {
    for (const timeout of ['abc', '123456789S', '10X', 'S']) {
      const s = stream(TOKENS.agentA, { 'grpc-timeout': timeout });
      s.send(helloFor('agent-e3', ['conf-e3']));
      expect(await s.ended);
    }
  });

  rowTest('E4', "the stream's own grpc-timeout passed (after the Welcome: the status comes as trailers)", async (expect) => {
    const s = stream(TOKENS.agentA, { 'grpc-timeout': '1500m' });
    await helloAndWelcome(s, helloFor('agent-e4', ['conf-e4']));
    const o = await s.ended;
    expect(o);
    assert.equal(o.form, 'trailers');
  });

  test('a grpc-timeout longer than a Node timer can wait (99999999H) is no deadline at all, not one that passed at once', async () => {
    const s = stream(TOKENS.agentA, { 'grpc-timeout': '99999999H' });
    open.push(s);
    await helloAndWelcome(s, helloFor('agent-e4-long', ['conf-e4-long']));
    // A round trip after the Welcome: the stream is still served (a timer of years fires after 1 ms in Node).
    s.send(batch(1, [added('conf-e4-long', cm('one', '1'))]));
    await s.waitForAck(1);
    assert.equal(s.finished, false);
  });

  rowTest('E5', 'a length prefix over 4 MiB is refused before its body is sent', async (expect) => {
    const s = stream();
    await helloAndWelcome(s, helloFor('agent-e5', ['conf-e5']));
    const prefix = new Uint8Array(5);
    new DataView(prefix.buffer).setUint32(1, 4 * MiB + 1);
    s.raw.writeRaw(prefix);
    expect(await s.ended);
  });

  rowTest('E5', 'a gzip message over 4 MiB after decompression', async (expect) => {
    const s = stream(TOKENS.agentA, { 'grpc-encoding': 'gzip' });
    s.raw.writeMessage(encodeRequest(helloFor('agent-e5b', ['conf-e5b'])), { compressed: true });
    assert.equal((await s.next()).message.case, 'welcome');
    const big = encodeRequest({ case: 'heartbeat', value: { agentId: 'x'.repeat(4 * MiB + 100) } });
    s.raw.writeRaw(frameMessage(gzipSync(big), true));
    expect(await s.ended);
  });

  rowTest('E6', 'a frame whose flag byte has bits other than bit 0', async (expect) => {
    const s = stream();
    const framed = frameMessage(encodeRequest(helloFor('agent-e6', ['conf-e6'])));
    framed[0] = 0x02;
    s.raw.writeRaw(framed);
    expect(await s.ended);
  });

  rowTest('E6', 'a body that does not decode as ConnectRequest (garbage first message)', async (expect) => {
    const s = stream();
    s.raw.writeMessage(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]));
    expect(await s.ended);
  });

  rowTest('E6', 'a stream that ends inside a message', async (expect) => {
    const s = stream();
    await helloAndWelcome(s, helloFor('agent-e6c', ['conf-e6c']));
    const framed = frameMessage(encodeRequest({ case: 'heartbeat', value: { agentId: 'agent-e6c' } }));
    s.raw.writeRaw(framed.subarray(0, framed.length - 2));
    s.end();
    expect(await s.ended);
  });

  rowTest('E6', 'gzip that does not inflate', async (expect) => {
    const s = stream(TOKENS.agentA, { 'grpc-encoding': 'gzip' });
    s.raw.writeMessage(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), { compressed: true, raw: true });
    expect(await s.ended);
  });

  rowTest(
    'E7',
    'no credentials, an unknown token, a malformed authorization header, an expired JWT, a JWT whose exp is too far away',
    async (expect) => {
      const cases: [string, Record<string, string>][] = [
        ['no credentials', {}],
        ['unknown token', { authorization: 'Bearer not-a-known-token-0123456789' }],
        ['malformed header', { authorization: 'Basic YWdlbnQ6cGFzcw==' }],
        ['expired JWT', { authorization: `Bearer ${await t.jwt(Math.floor(Date.now() / 1000) - 120)}` }],
        [
          'a JWT living longer than auth.jwt.maxLifetimeSeconds (1 h here)',
          { authorization: `Bearer ${await t.jwt(Math.floor(Date.now() / 1000) + 7200)}` },
        ],
      ];
      for (const [what, headers] of cases) {
        const s = stream(null, headers);
        s.send(helloFor('agent-e7', ['conf-e7']));
        const o = await s.ended;
        assert.ok(o.grpcStatus !== undefined, what);
        expect(o);
      }
    },
  );

  rowTest('E8', 'an identity without the agent role', async (expect) => {
    const s = stream(TOKENS.client);
    s.send(helloFor('agent-e8', ['conf-e8']));
    expect(await s.ended);
  });

  test("an account name outside the identity's `accounts` patterns gets a REFUSED verdict with a reason; the others CACHING", async () => {
    const s = stream();
    const w = await helloAndWelcome(s, helloFor('agent-patterns', ['conf-allowed', 'elsewhere-1']));
    assert.deepEqual(
      w.accounts.map((a) => [a.account, Verdict[a.verdict]]),
      [
        ['conf-allowed', 'CACHING'],
        ['elsewhere-1', 'REFUSED'],
      ],
    );
    assert.ok(w.accounts[1]!.reason.length > 0, 'the reason says why');
    s.end();
    await s.ended;
  });

  test('an account name is bound to the identity of its first claim: another identity is REFUSED, whatever it reports', async () => {
    const a = stream(TOKENS.agentA);
    const wa = await helloAndWelcome(a, helloFor('agent-bind-a', ['conf-bound']));
    assert.equal(wa.accounts[0]!.verdict, Verdict.CACHING);
    a.end();
    await a.ended;
    const b = stream(TOKENS.agentB);
    const wb = await helloAndWelcome(b, helloFor('agent-bind-b', ['conf-bound']));
    assert.equal(wb.accounts[0]!.verdict, Verdict.REFUSED);
    assert.ok(wb.accounts[0]!.reason.length > 0);
    b.end();
    await b.ended;
  });

  test('the Welcome answers the Hello: a session pair, the gateway id, one verdict per account in order, the heartbeat interval and max_unacked', async () => {
    const s = stream();
    const w = await helloAndWelcome(s, helloFor('agent-welcome', ['conf-w2', 'conf-w1', 'conf-w3']));
    assert.ok(w.sessionId && w.sessionToken, 'session_id and session_token');
    assert.ok(w.gatewayId);
    assert.deepEqual(
      w.accounts.map((a) => a.account),
      ['conf-w2', 'conf-w1', 'conf-w3'],
    );
    assert.ok(w.heartbeatIntervalSeconds > 0);
    assert.ok(w.maxUnacked > 0);
    // The gateway sends heartbeats after the Welcome (section 6).
    const deadline = Date.now() + 30_000;
    while (!s.received.some((r) => r.message.case === 'heartbeat') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(
      s.received.some((r) => r.message.case === 'heartbeat'),
      'a gateway heartbeat arrived',
    );
    // "The token is never stored in clear by the gateway": it is in no row of any table.
    const tables = await t.query<{ name: string }>(
      `select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    );
    assert.ok(tables.length > 0);
    for (const { name } of tables) {
      const rows = await t.query<{ row: string }>(`select t::text as row from "${name}" t`);
      assert.ok(!rows.some((r) => r.row.includes(w.sessionToken)), `the session token is stored in clear in ${name}`);
    }
    s.end();
    await s.ended;
  });

  test('content-type application/grpc is accepted as well as application/grpc+proto', async () => {
    const s = openAgentStream(t.gateway.grpcUrl, { bearer: TOKENS.agentA, contentType: 'application/grpc' });
    open.push(s);
    const w = await helloAndWelcome(s, helloFor('agent-plain-grpc', ['conf-plain-grpc']));
    assert.equal(w.accounts[0]!.verdict, Verdict.CACHING);
    s.end();
    await s.ended;
  });

  describe('errors before any response message are Trailers-Only (section 1)', () => {
    const cases: [string, (s: AgentStream) => void, Record<string, string>, string | null][] = [
      ['no credentials (E7)', (s) => s.send(helloFor('agent-to1', ['conf-to1'])), {}, null],
      ['an unknown token (E7)', (s) => s.send(helloFor('agent-to2', ['conf-to2'])), {}, 'not-a-known-token-0123456789'],
      ['an identity without the agent role (E8)', (s) => s.send(helloFor('agent-to3', ['conf-to3'])), {}, TOKENS.client],
      ['an unsupported grpc-encoding (E1)', (s) => s.send(helloFor('agent-to4', ['conf-to4'])), { 'grpc-encoding': 'br' }, TOKENS.agentA],
      ['a malformed grpc-timeout (E3)', (s) => s.send(helloFor('agent-to5', ['conf-to5'])), { 'grpc-timeout': 'soon' }, TOKENS.agentA],
      ['events before the Hello (E11)', (s) => s.send({ case: 'events', value: { sequence: 1n, events: [] } }), {}, TOKENS.agentA],
      ['garbage as the first message (E6)', (s) => s.raw.writeMessage(new Uint8Array([0xff, 0xff, 0xff])), {}, TOKENS.agentA],
      [
        'a wrong resume token (E19)',
        (s) =>
          s.send(
            helloFor('agent-to8', ['conf-to8'], { resumeSessionId: '00000000-0000-4000-8000-000000000000', resumeSessionToken: 'wrong' }),
          ),
        {},
        TOKENS.agentA,
      ],
    ];
    for (const [what, send, headers, bearer] of cases) {
      test(`${what} ends in one HEADERS frame with END_STREAM`, async () => {
        const s = stream(bearer, headers);
        send(s);
        assertTrailersOnly(await s.ended);
      });
    }
  });

  test('errors after a response message arrive as trailers (a second Hello after the Welcome, E12)', async () => {
    const s = stream();
    await helloAndWelcome(s, helloFor('agent-trailers', ['conf-trailers']));
    s.send(helloFor('agent-trailers', ['conf-trailers']));
    const o = await s.ended;
    assert.equal(o.grpcStatus, 3);
    assert.equal(o.form, 'trailers', 'the status is in a trailing HEADERS frame');
    assert.ok(o.messages >= 1);
  });

  test('grpc-message is percent-encoded; a longer message is cut after 1000 characters and says how many were left out', async () => {
    const s = stream();
    const name = `Ünïcödé-${'x'.repeat(3000)}`;
    s.send(helloFor('agent-long', [name]));
    const o = await s.ended;
    assert.equal(o.grpcStatus, 3, `an invalid account name is INVALID_ARGUMENT, got ${statusName(o.grpcStatus)}`);
    const raw = o.trailersOnly || o.form === 'status-in-headers' ? o.headers['grpc-message'] : o.trailers['grpc-message'];
    assert.ok(raw !== undefined);
    assert.match(raw, /^[\x20-\x7e]*$/, 'only printable ASCII on the wire');
    assert.doesNotMatch(raw.replace(/%[0-9A-Fa-f]{2}/g, ''), /%/, 'every % starts an escape');
    const decoded = decodeGrpcMessage(raw);
    const cut = /^([\s\S]{1000})… \((\d+) more characters\)$/.exec(decoded);
    assert.ok(
      cut,
      `decoded message of ${decoded.length} characters (${raw.length} on the wire): ${decoded.slice(0, 60)}…${decoded.slice(-40)}`,
    );
    assert.ok(Number(cut[2]) > 0);
  });
});
