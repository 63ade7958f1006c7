/**
 * The one allow-list of a kubectl caller's request headers that may go on toward the cluster (src/shared/kube-headers.ts,
 * docs/kubectl.md "Headers"), as the gateway, a forward and the agent apply it: exactly the listed names in any case,
 * `upgrade` on an upgrade only, and nothing else — no credentials, no `Impersonate-*`, no front-proxy `X-Remote-*`, no
 * audit or tracing header, no hop-by-hop header, no name a client invents later.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { allowedKubeHeaders, isKubeRequestHeader, KUBE_REQUEST_HEADERS } from '../../src/shared/kube-headers.js';

/** The table of docs/kubectl.md, "Headers" (Upgrade aside). */
const DOCUMENTED = [
  'accept',
  'content-type',
  'accept-encoding',
  'content-encoding',
  'content-length',
  'user-agent',
  'kubectl-command',
  'kubectl-session',
  'if-none-match',
  'if-modified-since',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-protocol',
  'sec-websocket-extensions',
];

/** What docs/kubectl.md and docs/security.md say never reaches the cluster from a caller. */
const REFUSED = [
  'authorization',
  'cookie',
  'impersonate-user',
  'impersonate-group',
  'impersonate-uid',
  'impersonate-extra-scopes',
  'x-remote-user',
  'x-remote-group',
  'x-remote-extra-scopes',
  'x-forwarded-for',
  'x-forwarded-proto',
  'forwarded',
  'origin',
  'referer',
  'expect',
  'audit-id',
  'traceparent',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'proxy-authorization',
  'host',
  'x-outpost-kube-caller',
  'x-anything-new',
  '',
  'accept ',
  'acceptx',
  'x-accept',
  'content',
];

describe('the allow-list of request headers', () => {
  test('is exactly the documented headers', () => {
    assert.deepEqual([...KUBE_REQUEST_HEADERS].sort(), [...DOCUMENTED].sort());
  });

  test('each documented header passes, in any case, on a request and on an upgrade', () => {
    for (const name of DOCUMENTED) {
      for (const spelled of [name, name.toUpperCase(), name.replace(/(^|-)([a-z])/g, (_, d, c) => d + c.toUpperCase())]) {
        assert.equal(isKubeRequestHeader(spelled, false), true, spelled);
        assert.equal(isKubeRequestHeader(spelled, true), true, spelled);
      }
    }
  });

  test('credentials, impersonation, front-proxy identity, audit and hop-by-hop headers never pass, upgrade or not', () => {
    for (const name of REFUSED) {
      for (const spelled of [name, name.toUpperCase()]) {
        assert.equal(isKubeRequestHeader(spelled, false), false, spelled);
        assert.equal(isKubeRequestHeader(spelled, true), false, spelled);
      }
    }
  });

  test('upgrade passes on an upgrade request only', () => {
    assert.equal(isKubeRequestHeader('upgrade', true), true);
    assert.equal(isKubeRequestHeader('Upgrade', true), true);
    assert.equal(isKubeRequestHeader('upgrade', false), false);
    assert.equal(isKubeRequestHeader('Upgrade', false), false);
  });
});

describe("the allowed headers of a Node request's headers", () => {
  test('only listed headers are kept, names lower-cased, each value in order', () => {
    const headers = {
      Accept: 'application/json',
      'user-agent': 'kubectl/v1.33.0',
      'x-remote-user': 'system:admin',
      'impersonate-group': ['system:masters', 'system:nodes'],
      authorization: 'Bearer stolen',
      cookie: 'session=1',
      'Sec-WebSocket-Protocol': ['v5.channel.k8s.io', 'v4.channel.k8s.io'],
      'audit-id': 'forged',
    };
    assert.deepEqual(allowedKubeHeaders(headers, false), [
      { name: 'accept', value: 'application/json' },
      { name: 'user-agent', value: 'kubectl/v1.33.0' },
      { name: 'sec-websocket-protocol', value: 'v5.channel.k8s.io' },
      { name: 'sec-websocket-protocol', value: 'v4.channel.k8s.io' },
    ]);
  });

  test('a header without a value is left out', () => {
    assert.deepEqual(allowedKubeHeaders({ accept: undefined, 'content-type': 'application/yaml' }, false), [
      { name: 'content-type', value: 'application/yaml' },
    ]);
  });

  test('upgrade is kept on an upgrade, dropped otherwise; connection never', () => {
    const headers = { Upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-version': '13' };
    assert.deepEqual(allowedKubeHeaders(headers, true), [
      { name: 'upgrade', value: 'websocket' },
      { name: 'sec-websocket-version', value: '13' },
    ]);
    assert.deepEqual(allowedKubeHeaders(headers, false), [{ name: 'sec-websocket-version', value: '13' }]);
  });

  test('nothing from a request carrying only refused headers', () => {
    assert.deepEqual(allowedKubeHeaders(Object.fromEntries(REFUSED.map((n) => [n, 'x'])), true), []);
  });
});
