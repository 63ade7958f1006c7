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

test('every field, for a request of each kind', () => {
  const none = {
    resourceRequest: false,
    verb: 'get',
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
    longRunning: false,
  };
  const resource = { ...none, resourceRequest: true, apiVersion: 'v1' };
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['GET', '/version', none],
    ['GET', '/api', none],
    ['GET', '/apis', none],
    ['GET', '/apis/apps', none],
    // Only `api` and `apis` open an API path: `apis` further down is any segment.
    ['GET', '/openapi/v3/apis/apps/v1', none],
    ['PATCH', '/api/v1/nodes/n-1/status', { ...resource, verb: 'patch', resource: 'nodes', name: 'n-1', subresource: 'status' }],
    // Only `namespaces` opens a namespace: a cluster-scoped resource's subresource stays one.
    [
      'GET',
      '/api/v1/nodes/n-1/proxy/metrics',
      { ...resource, verb: 'get', resource: 'nodes', name: 'n-1', subresource: 'proxy', longRunning: true },
    ],
    ['get', '/api/v1', { ...none, apiVersion: 'v1' }],
    ['GET', '/apis/apps/v1', { ...none, apiGroup: 'apps', apiVersion: 'v1' }],
    ['POST', '/apis/authorization.k8s.io', { ...none, verb: 'post' }],
    ['GET', '/api/v1/watch', { ...resource, verb: 'watch', longRunning: true }],
    ['GET', '/api/v1/namespaces', { ...resource, verb: 'list', resource: 'namespaces' }],
    ['HEAD', '/api/v1/namespaces/demo', { ...resource, verb: 'get', resource: 'namespaces', name: 'demo' }],
    ['PUT', '/api/v1/namespaces/demo/status', { ...resource, verb: 'update', resource: 'namespaces', name: 'demo', subresource: 'status' }],
    ['GET', '/api/v1/namespaces/demo/pods', { ...resource, verb: 'list', resource: 'pods', namespace: 'demo' }],
    [
      'get',
      '/api/v1/namespaces/demo/pods?watch=true',
      { ...resource, verb: 'watch', resource: 'pods', namespace: 'demo', longRunning: true },
    ],
    ['GET', '/api/v1/namespaces/demo/pods?watch=false', { ...resource, verb: 'list', resource: 'pods', namespace: 'demo' }],
    ['GET', '/api/v1/namespaces/demo/pods?watch=0', { ...resource, verb: 'list', resource: 'pods', namespace: 'demo' }],
    // Only a list becomes a watch by its query; a named get stays a get.
    ['GET', '/api/v1/namespaces/demo/pods/web?watch=1', { ...resource, verb: 'get', resource: 'pods', namespace: 'demo', name: 'web' }],
    ['HEAD', '/api/v1/namespaces/demo/pods', { ...resource, verb: 'list', resource: 'pods', namespace: 'demo' }],
    // Below a namespace, `status` is a resource like any other once something follows it.
    ['GET', '/api/v1/namespaces/demo/status/x', { ...resource, verb: 'get', resource: 'status', namespace: 'demo', name: 'x' }],
    [
      'POST',
      '/api/v1/namespaces/demo/pods/web/attach',
      { ...resource, verb: 'create', resource: 'pods', namespace: 'demo', name: 'web', subresource: 'attach', longRunning: true },
    ],
    [
      'GET',
      '/api/v1/namespaces/demo/services/web:http/proxy/some/page',
      { ...resource, verb: 'get', resource: 'services', namespace: 'demo', name: 'web:http', subresource: 'proxy', longRunning: true },
    ],
    ['GET', '/apis/apps/v1/deployments', { ...resource, verb: 'list', apiGroup: 'apps', resource: 'deployments' }],
    ['OPTIONS', '/api/v1/nodes/n-1', { ...resource, verb: 'options', resource: 'nodes', name: 'n-1' }],
    // A segment that is not valid percent-encoding is kept as it came.
    ['GET', '/api/v1/nodes/n%E0%A4%A', { ...resource, verb: 'get', resource: 'nodes', name: 'n%E0%A4%A' }],
    ['GET', '/version?timeout=2us', { ...none, timeoutMs: 0.002 }],
    ['GET', '/api/v1/pods?timeout=soon', { ...resource, verb: 'list', resource: 'pods', timeoutMs: undefined }],
  ];
  for (const [method, path, expected] of cases) assert.deepEqual(kubeRequestInfo(method, path), expected, `${method} ${path}`);
});

test('Go durations: every unit, fractions, several parts, nothing around them', async () => {
  const { parseGoDuration } = await import('../../src/gateway/kube/kube-request-info.js');
  const cases: Array<[string, number]> = [
    ['2h', 7_200_000],
    ['3m', 180_000],
    ['45s', 45_000],
    ['250ms', 250],
    ['1500us', 1.5],
    ['1500\u00b5s', 1.5],
    ['2000000ns', 2],
    ['1.25s', 1250],
    ['12.5m', 750_000],
    ['1h2m3s4ms', 3_723_004],
  ];
  for (const [text, ms] of cases) assert.equal(parseGoDuration(text), ms, text);
  for (const bad of ['x1s', '1sx', ' 1s', '1s ', '.5s', '1.s', '1..5s', '1.5.5s', 'ms', '1m s'])
    assert.equal(parseGoDuration(bad), undefined, bad);
});
