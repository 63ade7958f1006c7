/**
 * What the dashboard shows, as pure functions of web/src run in node: where a principal may wrap (after `:`, never
 * inside a word), the page size a URL asks for, an operation's target with its account and namespace (the
 * overview's recent operations), and when the sign-in form shows the server's refusal (only after a token was
 * sent).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { OperationRecordSchema, type OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createAuthStore } from '../../web/src/auth.js';
import { breakSegments } from '../../web/src/text-breaks.js';
import { describeTargetIn } from '../../web/src/operation-summary.js';
import { DEFAULT_PAGE_SIZE, readPageSize } from '../../web/src/page-size.js';

/** A record of an operation on `account` with `spec` (a case of the Operation oneof, as the generated types take it). */
function record(account: string, spec: { case: string; value: Record<string, unknown> }): OperationRecord {
  return create(OperationRecordSchema, { id: 'op-1', account, operation: { spec } as never });
}

describe('dashboard display helpers', () => {
  test('a principal breaks only after its separators', () => {
    assert.deepEqual(breakSegments('insecure:anonymous'), ['insecure:', 'anonymous']);
    assert.deepEqual(breakSegments('oidc:alice@example.com'), ['oidc:', 'alice@', 'example.com']);
    assert.deepEqual(breakSegments('system:serviceaccount:ci:deployer'), ['system:', 'serviceaccount:', 'ci:', 'deployer']);
    assert.deepEqual(breakSegments('root'), ['root']);
    assert.deepEqual(breakSegments(''), []);
    assert.deepEqual(breakSegments('web-7c5d.17a3', '-.'), ['web-', '7c5d.', '17a3'], 'object names: after - and .');
  });

  test('the page size comes from size=, 1 to 500, else the default', () => {
    const size = (q: string) => readPageSize(new URLSearchParams(q));
    assert.equal(size(''), DEFAULT_PAGE_SIZE);
    assert.equal(size('size=2'), 2);
    assert.equal(size('size=9999'), 500);
    for (const bad of ['size=0', 'size=-3', 'size=2.5', 'size=two', 'size=']) assert.equal(size(bad), DEFAULT_PAGE_SIZE, bad);
  });

  test("an operation's target reads kind/name in account/namespace", () => {
    assert.equal(
      describeTargetIn(record('sandbox', { case: 'scale', value: { kind: 'Deployment', namespace: 'demo', name: 'web', replicas: 2 } })),
      'Deployment/web in sandbox/demo',
    );
    assert.equal(describeTargetIn(record('prod', { case: 'delete', value: { kind: 'Namespace', name: 'old' } })), 'Namespace/old in prod');
    assert.equal(
      describeTargetIn(record('prod', { case: 'delete', value: { kind: 'Pod', namespace: 'shop', labelSelector: 'app=cart' } })),
      'Pod/-l app=cart in prod/shop',
    );
    assert.equal(
      describeTargetIn(record('prod', { case: 'apply', value: { namespace: 'shop', manifests: 'kind: A\n---\nkind: B\n' } })),
      '2 manifests in prod/shop',
    );
    assert.equal(
      describeTargetIn(record('prod', { case: 'logs', value: { namespace: 'shop', pod: 'cart-0' } })),
      'Pod/cart-0 in prod/shop',
    );
    assert.equal(describeTargetIn(create(OperationRecordSchema, { id: 'x', account: 'prod' })), 'prod', 'no request: the account');
  });
});

describe('sign-in messages', () => {
  const unauthenticated = new ConnectError('missing or invalid credentials', Code.Unauthenticated);

  test('a first visit without a token asks for one without showing a refusal', () => {
    const auth = createAuthStore(null);
    assert.equal(auth.report(unauthenticated, 0), true);
    assert.deepEqual(auth.state(), { version: 0, prompt: true, message: '', hasToken: false, who: null, signInError: '', recheck: 0 });
  });

  test("a rejected token brings the form back with the server's message, and forgets the token", () => {
    const auth = createAuthStore(null);
    auth.signIn('wrong-token');
    assert.equal(auth.report(unauthenticated, auth.state().version), true);
    assert.equal(auth.state().message, 'missing or invalid credentials');
    assert.equal(auth.state().prompt, true);
    assert.equal(auth.token(), null);
  });

  test('a dashboard session the gateway ended brings the form back with its message; its CSRF token is forgotten', () => {
    const auth = createAuthStore(null);
    auth.identify({ identity: 'oidc:corp:alice', roles: ['read'], csrfToken: 'c' });
    assert.equal(auth.csrf(), 'c');
    const ended = new ConnectError(
      'your dashboard session ended: it was not used for auth.oidc.idleMinutes (120); sign in again',
      Code.Unauthenticated,
    );
    assert.equal(auth.report(ended, auth.state().version), true);
    assert.deepEqual([auth.state().prompt, auth.state().message, auth.state().who, auth.csrf()], [true, ended.rawMessage, null, null]);
  });

  test('a refused CSRF token asks who is signed in again; a new session token restarts everything', () => {
    const auth = createAuthStore(null);
    auth.identify({ identity: 'oidc:corp:alice', roles: ['read'], csrfToken: 'old' });
    const stale = new ConnectError('refused: the X-Outpost-CSRF header does not match the dashboard session', Code.PermissionDenied);
    assert.equal(auth.report(stale, auth.state().version), false, 'the caller shows the refusal meanwhile');
    assert.deepEqual([auth.state().recheck, auth.state().prompt], [1, false]);
    const before = auth.state().version;
    auth.identify({ identity: 'oidc:corp:alice', roles: ['read'], csrfToken: 'new' });
    assert.deepEqual([auth.state().version, auth.csrf()], [before + 1, 'new']);
    auth.identify({ identity: 'oidc:corp:alice', roles: ['read'], csrfToken: 'new' });
    assert.equal(auth.state().version, before + 1, 'the same session: nothing restarts');
  });
});
