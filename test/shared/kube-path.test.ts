/**
 * The one canonical form of a proxied Kubernetes API path (src/shared/kube-path.ts), checked by the gateway and the
 * agent: what kubectl and client-go send passes; anything a URL parser would read differently from the check is
 * refused — and every accepted path is one that WHATWG URL parsing leaves exactly as it is.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterPathProblem, kubePathProblem } from '../../src/shared/kube-path.js';

const ACCEPTED = [
  '/',
  '/version',
  '/api/v1/namespaces/demo/pods?watch=1&resourceVersion=10&allowWatchBookmarks=true',
  '/apis/apps/v1/namespaces/demo/deployments/web',
  '/api/v1/namespaces/demo/pods?labelSelector=app.kubernetes.io%2Fname%3Dweb&fieldSelector=status.phase%21%3DRunning',
  // An exec command is query data and may hold a newline or a NUL.
  '/api/v1/namespaces/demo/pods/web/exec?command=sh&command=-c&command=echo%20a%0Aecho%20b%00&stdout=true',
  '/api/v1/namespaces/demo/services/web:http/proxy/some/page',
  '/openapi/v3/apis/apps/v1?hash=ABCDEF0123',
  '/api/v1/namespaces/demo/configmaps/a%2eb',
  '/api?',
];

const REFUSED: Array<[string, RegExp]> = [
  ['api', /single "\/"/],
  ['//evil/api', /single "\/"/],
  ['/x\\..\\..\\..\\outpost.api.v1.ObjectService\\ListObjects', /"\\"/],
  ['/api/%5c..%5c..', /encoded "\/" or "\\"/],
  ['/api/%2F..%2F..', /encoded "\/" or "\\"/],
  ['/api/../../armory', /"\.\." segment/],
  ['/api/./v1', /"\." or "\.\." segment/],
  ['/api/%2e%2E/x', /"\.\." segment/],
  ['/api/.%2e/x', /"\.\." segment/],
  ['/api/%2e./x', /"\.\." segment/],
  ['/api/v1/x%00', /encoded control character/],
  ['/api/v1/x%0d%0aimpersonate-user:x', /encoded control character/],
  ['/api/v1/x%7F', /encoded control character/],
  ['/api/v1/x y', /spaces or control/],
  ['/api/v1/x\ty', /spaces or control/],
  ['/api/v1/x\u007f', /spaces or control/],
  ['/api/v1/\u00e9', /outside printable ASCII/],
  ['/api/v1#frag', /"#"/],
  ['/api/v1/%zz', /not valid percent-encoding/],
  ['/api/v1/50%', /not valid percent-encoding/],
  ['/api/v1/x%2g', /not valid percent-encoding/],
  ['/api/v1/x%a', /not valid percent-encoding/],
  ['/api/v1/pods?q=%a', /not valid percent-encoding/],
  ['/api/v1/{x}', /reads the path differently/],
  ['/api/v1/"x"', /reads the path differently/],
  ["/api/v1/pods?labelSelector='x'", /reads the path differently/],
];

test('what clients send is accepted, and WHATWG parsing leaves it as it is', () => {
  for (const path of ACCEPTED) {
    assert.equal(kubePathProblem(path), undefined, path);
    const parsed = new URL(path, 'http://x.invalid');
    assert.equal(parsed.href.slice(parsed.origin.length), path);
  }
});

test('anything a URL parser would read differently is refused, with why', () => {
  for (const [path, why] of REFUSED) assert.match(kubePathProblem(path) ?? 'accepted', why, JSON.stringify(path));
});

test("the agent's own paths follow the same rules, without a query", () => {
  assert.equal(clusterPathProblem('/apis/apps/v1/namespaces/demo/deployments/web'), undefined);
  assert.match(clusterPathProblem('/apis/apps/v1?x=1') ?? '', /"\?"/);
  assert.match(clusterPathProblem('/apis/../../v3') ?? '', /"\.\." segment/);
  assert.match(clusterPathProblem('/apis/apps\\..\\..\\v3') ?? '', /"\\"/);
});
