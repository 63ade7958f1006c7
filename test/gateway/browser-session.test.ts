/**
 * Where the dashboard's session cookie may authenticate a request (src/gateway/auth/browser-session.ts,
 * docs/security.md "The dashboard's sessions"): the client API's Connect services, and on `/k8s` only a plain GET of
 * a pod's log — never another service, another `/k8s` path, another method, nor an upgrade.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CSRF_HEADER, sessionCookieAccepted, sessionCookieAcceptedOnKube } from '../../src/gateway/auth/browser-session.js';

test("the client API's services take the cookie; the agent's, health, reflection and look-alikes do not", () => {
  assert.equal(sessionCookieAccepted('outpost.api.v1.AccountService'), true);
  assert.equal(sessionCookieAccepted('outpost.api.v1.OperationService'), true);
  assert.equal(sessionCookieAccepted('outpost.agent.v1.AgentService'), false);
  assert.equal(sessionCookieAccepted('grpc.health.v1.Health'), false);
  assert.equal(sessionCookieAccepted('grpc.reflection.v1.ServerReflection'), false);
  assert.equal(sessionCookieAccepted('evil.outpost.api.v1.AccountService'), false);
  assert.equal(sessionCookieAccepted('outpost.api.v2.AccountService'), false);
  assert.equal(sessionCookieAccepted(''), false);
});

const LOG = '/api/v1/namespaces/default/pods/web-0/log';

test("on /k8s a plain GET of a pod's log takes the cookie, whatever the method's case", () => {
  assert.equal(sessionCookieAcceptedOnKube('GET', LOG, false), true);
  assert.equal(sessionCookieAcceptedOnKube('get', LOG, false), true);
  assert.equal(sessionCookieAcceptedOnKube('GET', '/api/v1/namespaces/kube-system/pods/p/log', false), true);
});

test('an upgrade of the same path (exec, attach, port-forward) never takes the cookie, nor another method', () => {
  assert.equal(sessionCookieAcceptedOnKube('GET', LOG, true), false);
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) {
    assert.equal(sessionCookieAcceptedOnKube(method, LOG, false), false, method);
  }
});

test('no other /k8s path takes the cookie: not the pod, its exec, other resources, nor a log path with more around it', () => {
  for (const path of [
    '/api/v1/namespaces/default/pods/web-0',
    '/api/v1/namespaces/default/pods/web-0/exec',
    '/api/v1/namespaces/default/pods/web-0/logs',
    '/api/v1/namespaces/default/pods/web-0/log/',
    '/api/v1/namespaces/default/pods/web-0/log/x',
    '/api/v1/namespaces/default/secrets/web-0/log',
    '/api/v1/namespaces/default/pods//log',
    '/api/v1/namespaces//pods/web-0/log',
    '/api/v1/namespaces/a/b/pods/web-0/log',
    '/api/v1/namespaces/default/pods/a/b/log',
    '/x/api/v1/namespaces/default/pods/web-0/log',
    '/apis/v1/namespaces/default/pods/web-0/log',
    '/api/v1/pods/web-0/log',
    '',
  ]) {
    assert.equal(sessionCookieAcceptedOnKube('GET', path, false), false, path);
  }
});

test('the CSRF header the dashboard sends is X-Outpost-CSRF', () => {
  assert.equal(CSRF_HEADER, 'X-Outpost-CSRF');
});
