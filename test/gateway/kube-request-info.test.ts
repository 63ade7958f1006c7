/**
 * What a Kubernetes API request is about, read as kube-apiserver's RequestInfo does, for the audit log and the
 * long-running check (watches, logs, exec, attach, port-forward and proxy are exempt from the request deadline).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kubeRequestInfo } from '../../src/gateway/kube/kube-request-info.js';

test('verbs, resources and scopes', () => {
  const cases: Array<[string, string, Partial<ReturnType<typeof kubeRequestInfo>>]> = [
    ['GET', '/api/v1/namespaces/demo/pods', { verb: 'list', resource: 'pods', namespace: 'demo', name: '', longRunning: false }],
    ['GET', '/api/v1/namespaces/demo/pods/web-1', { verb: 'get', resource: 'pods', name: 'web-1' }],
    ['GET', '/api/v1/pods?watch=1', { verb: 'watch', resource: 'pods', namespace: '', longRunning: true }],
    ['GET', '/api/v1/watch/namespaces/demo/pods', { verb: 'watch', namespace: 'demo', longRunning: true }],
    ['GET', '/api/v1/namespaces/demo/pods/web-1/log?follow=true', { verb: 'get', subresource: 'log', longRunning: true }],
    ['POST', '/api/v1/namespaces/demo/pods/web-1/exec?command=ls', { verb: 'create', subresource: 'exec', longRunning: true }],
    ['GET', '/api/v1/namespaces/demo/pods/web-1/portforward', { verb: 'get', subresource: 'portforward', longRunning: true }],
    ['POST', '/apis/apps/v1/namespaces/demo/deployments', { verb: 'create', apiGroup: 'apps', apiVersion: 'v1', resource: 'deployments' }],
    ['PATCH', '/apis/apps/v1/namespaces/demo/deployments/web/scale', { verb: 'patch', name: 'web', subresource: 'scale' }],
    ['PUT', '/api/v1/namespaces/demo/configmaps/a', { verb: 'update', name: 'a' }],
    ['DELETE', '/api/v1/namespaces/demo/configmaps/a', { verb: 'delete' }],
    ['DELETE', '/api/v1/namespaces/demo/configmaps', { verb: 'deletecollection' }],
    ['GET', '/api/v1/namespaces/demo', { verb: 'get', resource: 'namespaces', name: 'demo', namespace: '' }],
    ['PUT', '/api/v1/namespaces/demo/finalize', { verb: 'update', resource: 'namespaces', name: 'demo', subresource: 'finalize' }],
    ['GET', '/api/v1/nodes/n%2D1', { verb: 'get', resource: 'nodes', name: 'n-1' }],
  ];
  for (const [method, path, expected] of cases) {
    const info = kubeRequestInfo(method, path);
    assert.equal(info.resourceRequest, true, path);
    for (const [key, value] of Object.entries(expected)) assert.equal(info[key as keyof typeof info], value, `${method} ${path}: ${key}`);
  }
});

test('non-resource paths', () => {
  for (const path of ['/version', '/api', '/apis', '/apis/apps', '/openapi/v3', '/healthz']) {
    const info = kubeRequestInfo('GET', path);
    assert.equal(info.resourceRequest, false, path);
    assert.equal(info.resource, '');
    assert.equal(info.longRunning, false);
  }
});

test("the caller's timeout: a Go duration", async () => {
  const { parseGoDuration } = await import('../../src/gateway/kube/kube-request-info.js');
  assert.equal(kubeRequestInfo('GET', '/api?timeout=32s').timeoutMs, 32_000);
  assert.equal(kubeRequestInfo('GET', '/api/v1/pods?timeout=1m30s').timeoutMs, 90_000);
  assert.equal(kubeRequestInfo('GET', '/api/v1/pods').timeoutMs, undefined);
  assert.equal(parseGoDuration('500ms'), 500);
  assert.equal(parseGoDuration('1.5h'), 5_400_000);
  for (const bad of ['', '10', 's', '-1s', '1d', '1s2']) assert.equal(parseGoDuration(bad), undefined, bad);
});
