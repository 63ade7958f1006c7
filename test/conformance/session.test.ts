/**
 * Page sections 1 (credential lifetime), 2 (Hello, verdicts, AccountsChanged) and 6 (sessions) and rows E9–E13,
 * E18 and E19: a JWT stream ends at `exp`, a revoked token file ends its streams, the first message must be a Hello
 * and only one is allowed, every Hello / AccountsChanged / AccountReport rule refuses with nothing written, a resumed
 * or repeated agent takes the older stream over, and a resume pair proves the session only for its own identity and
 * agent id.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { encodeRequest, helloAndWelcome, openAgentStream, type AgentStream, type RequestMessage } from './agent-stream.js';
import { helloFor, startAuthenticatedGateway, TOKENS, type AuthenticatedGateway } from './harness.js';
import { rowTest } from './status-cases.js';

describe('Hello, verdicts and sessions (sections 2, 6, 9)', { concurrency: false }, () => {
  let t: AuthenticatedGateway;
  const open: AgentStream[] = [];
  before(async () => {
    t = await startAuthenticatedGateway();
  });
  after(async () => {
    for (const s of open) s.abort();
    await t?.close();
  });
  const stream = (bearer: string = TOKENS.agentA) => {
    const s = openAgentStream(t.gateway.grpcUrl, { bearer });
    open.push(s);
    return s;
  };
  const accountRows = async (name: string) => (await t.query<{ name: string }>(`select name from accounts where name = '${name}'`)).length;
  /** Waits for the end, bounding a hang only. */
  const endOf = async (s: AgentStream, ms = 30_000) => {
    const o = await Promise.race([s.ended, new Promise<'alive'>((r) => setTimeout(() => r('alive'), ms).unref())]);
    if (o === 'alive') assert.fail(`the stream did not end within ${ms} ms`);
    return o;
  };

  rowTest('E9', "the stream's JWT expired: the stream ends at exp, with the page's message", async (expect) => {
    const exp = Math.floor(Date.now() / 1000) + 5; // time to be welcomed first, on a loaded machine too
    const s = stream(await t.jwt(exp));
    const w = await helloAndWelcome(s, helloFor('agent-jwt-1', ['conf-jwt']));
    assert.equal(w.accounts[0]!.verdict, Verdict.CACHING);
    s.keepAlive('agent-jwt-1');
    const o = await endOf(s);
    assert.ok(Date.now() >= exp * 1000 - 50, 'not before exp');
    expect(o, /credentials expired; reconnect with a fresh token/);
  });

  rowTest('E10', "the stream's static token was revoked (its token file changed)", async (expect) => {
    const s = stream(TOKENS.file);
    await helloAndWelcome(s, helloFor('agent-file-1', ['conf-file']));
    s.keepAlive('agent-file-1');
    writeFileSync(t.tokenFile, 'conformance-file-token-rotated-0123456789\n');
    expect(await endOf(s));
  });

  rowTest(
    'E11',
    'a first message other than Hello (events, a sync marker, a heartbeat, a result, AccountsChanged): nothing written',
    async (expect) => {
      const firsts: RequestMessage[] = [
        {
          case: 'events',
          value: {
            sequence: 1n,
            events: [
              {
                account: 'conf-early',
                type: 1,
                apiVersion: 'v1',
                kind: 'ConfigMap',
                name: 'x',
                resourceVersion: '1',
                objectJson: new TextEncoder().encode('{"metadata":{"name":"x"}}'),
              },
            ],
          },
        },
        { case: 'sync', value: { sequence: 1n, account: 'conf-early', apiVersion: 'v1', kind: 'ConfigMap', phase: 1 } },
        { case: 'heartbeat', value: { agentId: 'agent-early' } },
        { case: 'operationResult', value: { id: 'op-early', success: true } },
        { case: 'accountsChanged', value: { changeId: 1n, added: [{ name: 'conf-early', apiHost: 'https://x:6443' }] } },
      ];
      for (const first of firsts) {
        const s = stream();
        s.send(first);
        expect(await s.ended);
      }
      assert.equal(await accountRows('conf-early'), 0);
    },
  );

  rowTest('E12', 'a second Hello', async (expect) => {
    const s = stream();
    await helloAndWelcome(s, helloFor('agent-twice', ['conf-twice']));
    s.send(helloFor('agent-twice', ['conf-twice']));
    expect(await s.ended);
  });

  rowTest(
    'E13',
    'a Hello that breaks section 2 (agent_id, account names, counts, api_host/error, KindInfo, NUL, lone surrogate): nothing written',
    async (expect) => {
      const ok = (name: string) => ({ name, apiHost: 'https://cluster.example:6443' });
      const hello = (agentId: string, accounts: object[], extra: object = {}): RequestMessage => ({
        case: 'hello',
        value: { agentId, accounts, ...extra } as never,
      });
      const cases: [string, RequestMessage][] = [
        ['empty agent_id', hello('', [ok('conf-h1')])],
        ['agent_id of 254 characters', hello('a'.repeat(254), [ok('conf-h1')])],
        [
          '1001 accounts',
          hello(
            'agent-h',
            Array.from({ length: 1001 }, (_, i) => ok(`conf-h1-${i}`)),
          ),
        ],
        ['a name twice', hello('agent-h', [ok('conf-h1'), ok('conf-h1')])],
        ['an upper-case name', hello('agent-h', [ok('Conf-h1')])],
        ['a name starting with a dash', hello('agent-h', [ok('-conf-h1')])],
        ['a name ending with a dot', hello('agent-h', [ok('conf-h1.')])],
        ['an empty name', hello('agent-h', [ok('')])],
        ['a name of 254 characters', hello('agent-h', [ok(`conf-${'a'.repeat(249)}`)])],
        ['neither api_host nor error', hello('agent-h', [{ name: 'conf-h1' }])],
        ['a KindInfo without kind', hello('agent-h', [{ ...ok('conf-h1'), kinds: [{ apiVersion: 'v1', kind: '' }] }])],
        ['a KindInfo without api_version', hello('agent-h', [{ ...ok('conf-h1'), kinds: [{ apiVersion: '', kind: 'ConfigMap' }] }])],
        ['a NUL in the zone', hello('agent-h', [ok('conf-h1')], { zone: 'z\u0000' })],
        ['a NUL in a property', hello('agent-h', [{ ...ok('conf-h1'), properties: { k: 'a\u0000b' } }])],
      ];
      for (const [what, message] of cases) {
        const s = stream();
        s.send(message);
        const o = await endOf(s, 30_000).catch(() => assert.fail(`${what}: the gateway accepted it`));
        assert.ok(o.grpcStatus !== undefined, what);
        expect(o);
        assert.equal(await accountRows('conf-h1'), 0, `${what}: nothing written`);
      }
      assert.equal(await accountRows('conf-h1-0'), 0);
      // A lone surrogate cannot be written as UTF-8: an agent that has one in a string sends its CESU-8 bytes (ED A0 80),
      // which is not valid UTF-8 for a proto3 string.
      const bytes = encodeRequest(hello('agent-h', [ok('conf-h1')], { version: 'vQQQ' }));
      bytes.set([0xed, 0xa0, 0x80], Buffer.from(bytes).indexOf(Buffer.from('QQQ')));
      const s = stream();
      s.raw.writeMessage(bytes);
      expect(await endOf(s));
      assert.equal(await accountRows('conf-h1'), 0, 'a lone surrogate in the version: nothing written');
    },
  );

  rowTest(
    'E13',
    'an AccountsChanged that breaks section 2 (empty, a name twice, adding an account already on the stream, over 1000 accounts)',
    async (expect) => {
      const cases: [string, RequestMessage][] = [
        ['empty', { case: 'accountsChanged', value: { changeId: 1n } }],
        [
          'a name twice',
          {
            case: 'accountsChanged',
            value: {
              changeId: 1n,
              added: [
                { name: 'conf-ac2', apiHost: 'https://x:6443' },
                { name: 'conf-ac2', apiHost: 'https://x:6443' },
              ],
            },
          },
        ],
        [
          'an account already on the stream',
          { case: 'accountsChanged', value: { changeId: 1n, added: [{ name: 'conf-ac1', apiHost: 'https://x:6443' }] } },
        ],
        [
          'over 1000 accounts',
          {
            case: 'accountsChanged',
            value: {
              changeId: 1n,
              added: Array.from({ length: 1000 }, (_, i) => ({ name: `conf-ac-many-${i}`, apiHost: 'https://x:6443' })),
            },
          },
        ],
        [
          'an invalid name',
          { case: 'accountsChanged', value: { changeId: 1n, added: [{ name: 'Not_Valid', apiHost: 'https://x:6443' }] } },
        ],
      ];
      for (const [what, message] of cases) {
        const s = stream();
        await helloAndWelcome(s, helloFor(`agent-ac-${what.length}`, ['conf-ac1']));
        s.send(message);
        const o = await s.ended;
        assert.ok(o.grpcStatus !== undefined, what);
        expect(o);
      }
      assert.equal(await accountRows('conf-ac2'), 0);
      assert.equal(await accountRows('conf-ac-many-0'), 0);
    },
  );

  rowTest('E13', 'an AccountReport that breaks section 2, and an empty ConnectRequest', async (expect) => {
    const bad: RequestMessage[] = [
      {
        case: 'accountReport',
        value: { account: { name: 'conf-rep', apiHost: 'https://x:6443', kinds: [{ apiVersion: 'v1', kind: '' }] } },
      },
      { case: 'accountReport', value: { account: { name: 'conf-rep', apiHost: 'https://x:6443', kubernetesVersion: 'v\u0000' } } },
      undefined as unknown as RequestMessage,
    ];
    for (const message of bad) {
      const s = stream();
      await helloAndWelcome(s, helloFor('agent-rep', ['conf-rep']));
      s.send(message ?? { case: undefined });
      expect(await s.ended);
    }
  });

  test('AccountsChanged is answered by AccountVerdicts with its change_id: one verdict per added account, in order', async () => {
    const s = stream();
    await helloAndWelcome(s, helloFor('agent-changes', ['conf-ch1']));
    s.send({
      case: 'accountsChanged',
      value: {
        changeId: 1n,
        added: [
          { name: 'conf-ch3', apiHost: 'https://x:6443' },
          { name: 'other-ch', apiHost: 'https://x:6443' },
          { name: 'conf-ch2', apiHost: 'https://x:6443' },
        ],
      },
    });
    const v = await s.nextOf('verdicts');
    assert.equal(v.changeId, 1n);
    assert.deepEqual(
      v.accounts.map((a) => [a.account, Verdict[a.verdict]]),
      [
        ['conf-ch3', 'CACHING'],
        ['other-ch', 'REFUSED'],
        ['conf-ch2', 'CACHING'],
      ],
    );
    s.send({ case: 'accountsChanged', value: { changeId: 2n, removed: ['conf-ch3'] } });
    const v2 = await s.nextOf('verdicts');
    assert.equal(v2.changeId, 2n);
    assert.equal(v2.accounts.length, 0);
    s.end();
    await s.ended;
  });

  rowTest('E18', 'a newer stream resumed the session: the older one ends, the new one caches the account at once', async (expect) => {
    const first = stream();
    const w1 = await helloAndWelcome(first, helloFor('agent-takeover', ['conf-takeover']));
    assert.equal(w1.accounts[0]!.verdict, Verdict.CACHING);
    const second = stream();
    const w2 = await helloAndWelcome(
      second,
      helloFor('agent-takeover', ['conf-takeover'], { resumeSessionId: w1.sessionId, resumeSessionToken: w1.sessionToken }),
    );
    assert.equal(w2.accounts[0]!.verdict, Verdict.CACHING, 'the lease moved to the new stream without waiting');
    assert.ok(w2.sessionId && w2.sessionToken, 'a new pair on every Welcome');
    assert.notEqual(w2.sessionToken, w1.sessionToken);
    expect(await endOf(first));
    second.end();
    await second.ended;
  });

  rowTest('E18', 'the same agent and identity connected again without a resume pair', async (expect) => {
    const first = stream();
    await helloAndWelcome(first, helloFor('agent-again', ['conf-again']));
    const second = stream();
    const w2 = await helloAndWelcome(second, helloFor('agent-again', ['conf-again']));
    expect(await endOf(first));
    assert.equal(w2.accounts[0]!.verdict, Verdict.CACHING);
    second.end();
    await second.ended;
  });

  rowTest(
    'E19',
    "a resume pair that is not valid for this identity and agent id (wrong token, unknown session, another identity's pair, another agent id): nothing written",
    async (expect) => {
      const owner = stream(TOKENS.agentA);
      const w = await helloAndWelcome(owner, helloFor('agent-owner', ['conf-owner']));
      const cases: [string, string, RequestMessage][] = [
        [
          'a wrong token',
          TOKENS.agentA,
          helloFor('agent-owner', ['conf-e19'], { resumeSessionId: w.sessionId, resumeSessionToken: `${w.sessionToken}x` }),
        ],
        [
          'an unknown session',
          TOKENS.agentA,
          helloFor('agent-owner', ['conf-e19'], {
            resumeSessionId: '00000000-0000-4000-8000-000000000000',
            resumeSessionToken: w.sessionToken,
          }),
        ],
        ['a session id alone', TOKENS.agentA, helloFor('agent-owner', ['conf-e19'], { resumeSessionId: w.sessionId })],
        [
          "another identity's pair",
          TOKENS.agentB,
          helloFor('agent-owner', ['conf-e19'], { resumeSessionId: w.sessionId, resumeSessionToken: w.sessionToken }),
        ],
        [
          'another agent id',
          TOKENS.agentA,
          helloFor('agent-other', ['conf-e19'], { resumeSessionId: w.sessionId, resumeSessionToken: w.sessionToken }),
        ],
      ];
      for (const [what, bearer, message] of cases) {
        const s = stream(bearer);
        s.send(message);
        const o = await s.ended;
        assert.ok(o.grpcStatus !== undefined, what);
        expect(o, /invalid session token/);
        assert.equal(await accountRows('conf-e19'), 0, `${what}: checked before anything is written`);
      }
      assert.equal(owner.finished, false, 'the session owner is untouched');
      owner.end();
      await owner.ended;
    },
  );

  test('a STANDBY stream (same identity, another agent) is promoted with a pushed AccountVerdicts (change_id 0, CACHING) when the caching stream goes away', async () => {
    const caching = stream();
    const w1 = await helloAndWelcome(caching, helloFor('agent-primary', ['conf-standby']));
    assert.equal(w1.accounts[0]!.verdict, Verdict.CACHING);
    const standby = stream();
    const w2 = await helloAndWelcome(standby, helloFor('agent-secondary', ['conf-standby']));
    assert.equal(w2.accounts[0]!.verdict, Verdict.STANDBY);
    assert.match(w2.accounts[0]!.reason, /agent-primary/, 'the reason names the caching stream');
    standby.keepAlive('agent-secondary');
    try {
      caching.end();
      await caching.ended;
      const pushed = await standby.nextOf('verdicts', 15_000);
      assert.equal(pushed.changeId, 0n);
      assert.deepEqual(
        pushed.accounts.map((a) => [a.account, Verdict[a.verdict]]),
        [['conf-standby', 'CACHING']],
      );
    } finally {
      standby.end();
      await standby.ended;
    }
  });
});
