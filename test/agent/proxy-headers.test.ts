/**
 * What the agent sends its cluster for a proxied /k8s request (src/agent/kube-proxy/proxy-headers.ts, pure: no
 * cluster; test/agent/kube-proxy-headers.test.ts records the same through a real proxy): the identity to impersonate
 * — the account's static one, whatever it names, or the caller's, refused when it is missing, in `system:` or a name
 * the cluster's HTTP parser would trim into another — then the caller's headers the shared allow-list admits beside
 * the agent's credentials and `Impersonate-*` headers, and the cluster's response headers passed back without
 * hop-by-hop ones.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { accountSchema } from '../../src/agent/config/schema.js';
import { impersonationFor, outgoingHeaders, responseHeaders } from '../../src/agent/kube-proxy/proxy-headers.js';
import type { KubeHeader, KubeIdentity } from '../../src/gen/outpost/agent/v1/kube_pb.js';

const callerAccount = accountSchema.parse({ name: 'c1', serviceAccount: true });
const staticAccount = accountSchema.parse({
  name: 'c1',
  serviceAccount: true,
  kubeProxy: { identity: 'static', user: 'system:admin', groups: ['system:masters', 'ops'] },
});
const caller = (user: string, groups: string[] = []) => ({ principal: 'token:alice', user, groups }) as unknown as KubeIdentity;
const headersOf = (pairs: Array<[string, string]>) => pairs.map(([name, value]) => ({ name, value })) as KubeHeader[];
const refusalOf = (identity: KubeIdentity | undefined) => {
  try {
    impersonationFor(callerAccount, identity);
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail(`${JSON.stringify(identity)} was impersonated`);
};

/** What a hostile caller (or a gateway that forgot to filter) may put on a request. */
const HOSTILE: Array<[string, string]> = [
  ['x-remote-user', 'system:admin'],
  ['X-Remote-Group', 'system:masters'],
  ['x-remote-extra-scopes', 'everything'],
  ['Impersonate-User', 'sandbox-admin'],
  ['impersonate-group', 'system:masters'],
  ['impersonate-uid', '0'],
  ['Authorization', 'Bearer stolen'],
  ['cookie', 'session=1'],
  ['x-forwarded-for', '10.0.0.1'],
  ['audit-id', 'forged'],
  ['connection', 'close'],
  ['transfer-encoding', 'chunked'],
  ['host', 'evil.example'],
  ['x-anything-new', '1'],
];

describe('the identity impersonated', () => {
  test("a static identity is the account's own: any name, system: too, whoever calls", () => {
    assert.deepEqual(impersonationFor(staticAccount, caller('outpost:alice', ['outpost:devs'])), {
      user: 'system:admin',
      groups: ['system:masters', 'ops'],
    });
    assert.deepEqual(impersonationFor(staticAccount, undefined), { user: 'system:admin', groups: ['system:masters', 'ops'] });
  });

  test("with identity caller, the caller's user and groups as the gateway mapped them", () => {
    assert.deepEqual(impersonationFor(callerAccount, caller('outpost:alice', ['outpost:devs', 'System:masters'])), {
      user: 'outpost:alice',
      groups: ['outpost:devs', 'System:masters'],
    });
    assert.deepEqual(impersonationFor(callerAccount, caller('outpost:alice')), { user: 'outpost:alice', groups: [] });
  });

  test('no caller, or a caller without a user, is refused: the agent never calls as itself', () => {
    assert.equal(refusalOf(undefined), 'the request names no caller to impersonate');
    assert.equal(refusalOf(caller('', ['outpost:devs'])), 'the request names no caller to impersonate');
  });

  test("a caller's system: user or group is refused, naming which", () => {
    assert.equal(
      refusalOf(caller('system:admin', ['outpost:devs'])),
      `the caller's user "system:admin" is in the cluster's reserved system: namespace: not impersonated`,
    );
    assert.equal(
      refusalOf(caller('outpost:alice', ['outpost:devs', 'system:masters'])),
      `the caller's group "system:masters" is in the cluster's reserved system: namespace: not impersonated`,
    );
  });

  test('a name the cluster would trim into another, or one a header cannot carry, is refused', () => {
    assert.equal(
      refusalOf(caller(' system:admin')),
      `the caller's user " system:admin" starts or ends with whitespace, which the cluster's HTTP parser trims: not impersonated`,
    );
    assert.equal(
      refusalOf(caller('outpost:alice', ['\tsystem:masters'])),
      `the caller's group "\\tsystem:masters" holds a control character: not impersonated`,
    );
    assert.match(
      refusalOf(caller('outpost:alice', ['outpost:d\u00e9vs'])),
      /^the caller's group "outpost:dévs" holds a character outside printable ASCII/,
    );
    assert.equal(refusalOf(caller('outpost:alice', [''])), `the caller's group "" is empty: not impersonated`);
  });

  test('a long name is quoted by its first 100 characters only', () => {
    const name = `system:${'a'.repeat(200)}`;
    assert.equal(
      refusalOf(caller(name)),
      `the caller's user ${JSON.stringify(name.slice(0, 100))} is in the cluster's reserved system: namespace: not impersonated`,
    );
  });
});

describe('the request headers sent to the cluster', () => {
  const alice = { user: 'outpost:alice', groups: ['outpost:devs', 'outpost:ops'] };
  const credentials = { Authorization: 'Bearer agent-token' };

  test("allowed caller headers pass beside the agent's credentials and impersonation; the hostile ones never", () => {
    const headers = headersOf([['Accept', 'application/json'], ['user-agent', 'kubectl/v1.33.0'], ['Content-Length', '12'], ...HOSTILE]);
    assert.deepEqual(outgoingHeaders(headers, credentials, alice, false), {
      accept: 'application/json',
      'user-agent': 'kubectl/v1.33.0',
      'content-length': '12',
      authorization: 'Bearer agent-token',
      'impersonate-user': 'outpost:alice',
      'impersonate-group': ['outpost:devs', 'outpost:ops'],
    });
  });

  test('a repeated header keeps every value in order', () => {
    const headers = headersOf([
      ['accept', 'application/json'],
      ['sec-websocket-protocol', 'v5.channel.k8s.io'],
      ['Sec-WebSocket-Protocol', 'v4.channel.k8s.io'],
      ['sec-websocket-protocol', 'channel.k8s.io'],
    ]);
    assert.deepEqual(outgoingHeaders(headers, {}, alice, false), {
      accept: 'application/json',
      'sec-websocket-protocol': ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'channel.k8s.io'],
      'impersonate-user': 'outpost:alice',
      'impersonate-group': ['outpost:devs', 'outpost:ops'],
    });
  });

  test('the agent credentials replace a header of the same name; without groups no Impersonate-Group is sent', () => {
    const out = outgoingHeaders(
      headersOf([['user-agent', 'kubectl/v1.33.0']]),
      { 'User-Agent': 'outpost-agent' },
      { user: 'ops', groups: [] },
      false,
    );
    assert.deepEqual(out, { 'user-agent': 'outpost-agent', 'impersonate-user': 'ops' });
  });

  test("a caller's upgrade header does not pass on a plain request", () => {
    const out = outgoingHeaders(
      headersOf([
        ['upgrade', 'websocket'],
        ['accept', '*/*'],
      ]),
      {},
      alice,
      false,
    );
    assert.equal(out.upgrade, undefined);
    assert.equal(out.connection, undefined);
    assert.equal(out.accept, '*/*');
  });

  test('an upgrade carries the WebSocket handshake, Connection: Upgrade and no content-length', () => {
    const headers = headersOf([
      ['Upgrade', 'WebSocket'],
      ['sec-websocket-key', 'MDEyMzQ1Njc4OWFiY2RlZg=='],
      ['sec-websocket-version', '13'],
      ['content-length', '0'],
      ['connection', 'keep-alive'],
      ...HOSTILE,
    ]);
    assert.deepEqual(outgoingHeaders(headers, credentials, alice, true), {
      'sec-websocket-key': 'MDEyMzQ1Njc4OWFiY2RlZg==',
      'sec-websocket-version': '13',
      authorization: 'Bearer agent-token',
      'impersonate-user': 'outpost:alice',
      'impersonate-group': ['outpost:devs', 'outpost:ops'],
      connection: 'Upgrade',
      upgrade: 'WebSocket',
    });
  });

  test('an upgrade is always to WebSocket: any other protocol, or none, is asked as websocket', () => {
    for (const asked of ['h2c', 'websocket2', 'xwebsocket', 'websocket, h2c', 'h2c, websocket', '']) {
      const out = outgoingHeaders(headersOf([['upgrade', asked]]), {}, alice, true);
      assert.equal(out.upgrade, 'websocket', asked);
    }
    assert.equal(outgoingHeaders([], {}, alice, true).upgrade, 'websocket');
    assert.equal(outgoingHeaders(headersOf([['upgrade', 'websocket']]), {}, alice, true).upgrade, 'websocket');
  });
});

describe('the response headers passed back', () => {
  const raw = [
    'Content-Type',
    'application/json',
    'Content-Length',
    '42',
    'Connection',
    'keep-alive',
    'Keep-Alive',
    'timeout=5',
    'Transfer-Encoding',
    'chunked',
    'Upgrade',
    'websocket',
    'Proxy-Authenticate',
    'Basic',
    'Trailer',
    'x',
    'Host',
    'cluster.internal',
    'Authorization',
    'Bearer agent-token',
    'Cookie',
    'a=1',
    'Audit-Id',
    'abc',
    'Cache-Control',
    'no-cache',
    'Cache-Control',
    'private',
  ];

  test("the cluster's headers, names lower-cased and repeated ones kept; hop-by-hop and request-only ones dropped", () => {
    assert.deepEqual(responseHeaders(raw, false), [
      { name: 'content-type', value: 'application/json' },
      { name: 'content-length', value: '42' },
      { name: 'audit-id', value: 'abc' },
      { name: 'cache-control', value: 'no-cache' },
      { name: 'cache-control', value: 'private' },
    ]);
  });

  test("an upgrade's answer keeps its connection and upgrade headers, still not the other hop-by-hop ones", () => {
    assert.deepEqual(responseHeaders(raw, true), [
      { name: 'content-type', value: 'application/json' },
      { name: 'content-length', value: '42' },
      { name: 'connection', value: 'keep-alive' },
      { name: 'upgrade', value: 'websocket' },
      { name: 'audit-id', value: 'abc' },
      { name: 'cache-control', value: 'no-cache' },
      { name: 'cache-control', value: 'private' },
    ]);
  });

  test('a name without a value is not passed back', () => {
    assert.deepEqual(responseHeaders(['Content-Type', 'application/json', 'X-Dangling'], false), [
      { name: 'content-type', value: 'application/json' },
    ]);
    assert.deepEqual(responseHeaders([], false), []);
  });
});
