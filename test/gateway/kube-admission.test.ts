/**
 * Admission of `/k8s/{account}/…` (src/gateway/kube/kube-admission.ts), called directly with real requests and a real
 * authenticator built from the configuration: everything decided from the path and the headers before a byte of the
 * body is read or anything reaches an agent. The path is refused before authentication; the credentials, the `kube`
 * role, the WebSocket-only upgrade, the account rules, the identity mapping and the concurrency limits after it, with
 * the refusal recorded (who asked what) — except an unauthenticated request and a replica's forward. A forward is
 * admitted again as if its caller had come here: this replica's rules, its identity mapping, its account limit; the
 * caller's identity limit is the forwarding replica's. The end-to-end kubectl tests cover the same through servers;
 * these name every rule, each with its exact answer.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { createAuthenticator } from '../../src/gateway/auth/authenticator.js';
import type { BrowserRequest } from '../../src/gateway/auth/browser-session.js';
import { principalFromRules } from '../../src/gateway/auth/principal.js';
import { createReplicaTokenSigner } from '../../src/gateway/auth/replica-token.js';
import { describePrincipal, encodeDescription } from '../../src/gateway/auth/vouched-principal.js';
import { loadGatewayConfig } from '../../src/gateway/config/load.js';
import { kubeSchema } from '../../src/gateway/config/kube-schema.js';
import { createKubeAdmission, KUBE_PREFIX, type Admitted } from '../../src/gateway/kube/kube-admission.js';
import { CALLER_HEADER } from '../../src/gateway/kube/kube-forward.js';
import { KubeRefusal } from '../../src/gateway/kube/kube-status.js';

const ALICE = 'alice-token-0123456789abcdef';
const READER = 'reader-token-0123456789abcdef';
const ROOT = 'root-token-0123456789abcdef';

const dir = mkdtempSync(join(tmpdir(), 'outpost-kube-admission-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const replicaSecretFile = join(dir, 'replica-secret');
writeFileSync(replicaSecretFile, 'replica-secret-kube-admission-0123456789abcdef');
// A token is minted at each use (the signer renews it at half its 60 s life): one minted at load could expire
// before a slow machine reaches the tests that send it.
const replicaSigner = createReplicaTokenSigner(replicaSecretFile, 'r2');

const gatewayConfig = loadGatewayConfig({
  env: {},
  overrides: {
    insecure: false,
    auth: {
      tokens: [
        { subject: 'alice', token: ALICE, groups: ['devs'] },
        { subject: 'reader', token: READER },
        { subject: 'system:admin', token: ROOT },
      ],
      replicaSecretFile,
    },
    authorization: {
      rules: [
        { kind: 'token', subject: '^alice$', roles: ['kube'], accounts: ['prod-*'] },
        { kind: 'token', subject: '^reader$', roles: ['read'] },
        { kind: 'token', subject: '^system:admin$', roles: ['kube'], accounts: ['*'] },
        { kind: 'token', subject: '^bob$', roles: ['kube'], accounts: ['prod-*'] },
        { kind: 'token', subject: '^dana$', roles: ['kube'], accounts: ['prod-*'] },
      ],
    },
  },
});
const authenticator = createAuthenticator(gatewayConfig);
after(() => authenticator.close());

/** The dashboard's sessions, as the sign-in module resolves them: `session=dana` signed in, two that fail. */
const browserRequests: BrowserRequest[] = [];
authenticator.useSessions({
  async authenticate(request) {
    browserRequests.push(request);
    if (request.cookie === 'session=dana') return principalFromRules('dana', 'token', gatewayConfig.authorization.rules);
    if (request.cookie === 'session=forged') throw new ConnectError('the CSRF header is missing', Code.PermissionDenied);
    if (request.cookie === 'session=ended') throw new ConnectError('the session ended', Code.Unauthenticated);
    throw new Error('session store unreachable');
  },
});

/** A real Node request as the HTTP server hands it over (cleartext: no certificate). */
function request(
  url: string | undefined,
  headers: http.IncomingHttpHeaders = {},
  method: string | undefined = 'GET',
): http.IncomingMessage {
  const req = new http.IncomingMessage(new Socket());
  req.url = url;
  req.method = method;
  req.headers = headers;
  return req;
}

/** The request as a server that read no method would hand it over (the admission reads it as a GET). */
function withoutMethod(req: http.IncomingMessage): http.IncomingMessage {
  req.method = undefined;
  return req;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Recorded {
  principal: string;
  groups: readonly string[];
  account: string;
  method: string;
  path: string;
  status: number;
  message: string;
}

/** An admission with the given `kube` settings, recording every refusal it reports. */
function admission(kube: Record<string, unknown> = {}) {
  const refused: Recorded[] = [];
  const admit = createKubeAdmission(authenticator, kubeSchema.parse(kube), (principal, groups, account, method, path, refusal) => {
    refused.push({ principal, groups, account, method, path, status: refusal.status, message: refusal.message });
  });
  return { admit, refused };
}

/** The refusal `promise` rejects with (fails when it resolves or rejects with anything else). */
async function refusalOf(promise: Promise<Admitted>): Promise<KubeRefusal> {
  try {
    const admitted = await promise;
    admitted.release();
  } catch (err) {
    assert.ok(err instanceof KubeRefusal, `not a refusal: ${String(err)}`);
    return err;
  }
  assert.fail('admitted');
}

test('the route prefix', () => {
  assert.equal(KUBE_PREFIX, '/k8s/');
});

test('an admitted request: its account, its checked path with the query, the caller mapped, a slot', async () => {
  const { admit, refused } = admission();
  const admitted = await admit(request('/k8s/prod-eu/api/v1/namespaces/demo/pods?watch=1', bearer(ALICE)));
  assert.equal(admitted.account, 'prod-eu');
  assert.equal(admitted.path, '/api/v1/namespaces/demo/pods?watch=1');
  assert.equal(admitted.principal.subject, 'alice');
  assert.equal(admitted.principal.method, 'token');
  assert.deepEqual(admitted.caller, {
    principal: 'token:alice',
    principalGroups: ['devs'],
    user: 'outpost:alice',
    groups: ['outpost:devs'],
  });
  assert.equal(admitted.forwarded, false);
  admitted.release();
  assert.deepEqual(refused, []);
});

test('the account is the first segment, percent-decoded; the path is what follows it, "/" when nothing does', async () => {
  const { admit } = admission();
  const cases: Array<[string, string, string]> = [
    ['/k8s/prod-eu', 'prod-eu', '/'],
    ['/k8s/prod-eu/', 'prod-eu', '/'],
    ['/k8s/prod-eu?timeout=32s', 'prod-eu', '/?timeout=32s'],
    ['/k8s/prod-eu/version?x=a/b', 'prod-eu', '/version?x=a/b'],
    ['/k8s/prod-eu?x=a/b', 'prod-eu', '/?x=a/b'],
    ['/k8s/prod%2Deu/api', 'prod-eu', '/api'],
  ];
  for (const [url, account, path] of cases) {
    const admitted = await admit(request(url, bearer(ALICE)));
    assert.equal(admitted.account, account, url);
    assert.equal(admitted.path, path, url);
    admitted.release();
  }
});

test('a target that is not /k8s/{account}/{canonical path} is refused 400 before authentication, and not recorded', async () => {
  const { admit, refused } = admission();
  const cases: Array<[string | undefined, string]> = [
    ['/k8s/%E0%A4%A/api', 'the account name in the path is not valid percent-encoding'],
    ['/k8s/Prod_EU/api', '"Prod_EU" is not an account name: use /k8s/{account}/api/…'],
    ['/k8s//api/v1/pods', '"" is not an account name: use /k8s/{account}/api/…'],
    [`/k8s/${'X'.repeat(150)}/api`, `"${'X'.repeat(100)}" is not an account name: use /k8s/{account}/api/…`],
    [undefined, '"" is not an account name: use /k8s/{account}/api/…'],
  ];
  for (const [url, message] of cases) {
    for (const headers of [{}, bearer(ALICE)]) {
      const refusal = await refusalOf(admit(request(url, headers)));
      assert.equal(refusal.status, 400, String(url));
      assert.equal(refusal.message, message, String(url));
    }
  }
  const dots = await refusalOf(admit(request('/k8s/prod-eu/api/../../armory/accounts')));
  assert.equal(dots.status, 400);
  assert.match(dots.message, /"\.\." segment.* \(below \/k8s\/\{account\}\)$/);
  const encoded = await refusalOf(admit(request('/k8s/prod-eu/api/%5c..%5c..', bearer(ALICE))));
  assert.equal(encoded.status, 400);
  assert.match(encoded.message, /\(below \/k8s\/\{account\}\)$/);
  assert.deepEqual(refused, []);
});

test('kubectl through the gateway switched off answers 404 to everyone, before the path or the credentials', async () => {
  const { admit, refused } = admission({ enabled: false });
  for (const [url, headers] of [
    ['/k8s/prod-eu/api', bearer(ALICE)],
    ['/k8s/Prod_EU/api', {}],
  ] as const) {
    const refusal = await refusalOf(admit(request(url, headers)));
    assert.equal(refusal.status, 404);
    assert.equal(refusal.message, 'kubectl through the gateway is disabled on this gateway (kube.enabled)');
  }
  assert.deepEqual(refused, []);
});

test("without valid credentials: 401 with the authenticator's reason, never recorded", async () => {
  const { admit, refused } = admission();
  const none = await refusalOf(admit(request('/k8s/prod-eu/api')));
  assert.equal(none.status, 401);
  assert.equal(none.message, 'authentication required: present a bearer token (Authorization: Bearer <token>)');
  const wrong = await refusalOf(admit(request('/k8s/prod-eu/api', bearer('not-a-token-0123456789'))));
  assert.equal(wrong.status, 401);
  assert.equal(wrong.message, 'bearer token not recognized');
  const basic = await refusalOf(admit(request('/k8s/prod-eu/api', { authorization: 'Basic YTpi' })));
  assert.equal(basic.status, 401);
  assert.match(basic.message, /^unsupported Authorization scheme "Basic"/);
  assert.deepEqual(refused, []);
});

test("the dashboard's session is accepted for reading a pod's log only (GET, no upgrade), the query aside", async () => {
  const { admit, refused } = admission();
  const log = '/k8s/prod-eu/api/v1/namespaces/demo/pods/web-1/log';
  browserRequests.length = 0;
  const admitted = await admit(request(`${log}?follow=true`, { cookie: 'session=dana' }, 'GET'));
  assert.equal(admitted.principal.subject, 'dana');
  assert.equal(admitted.path, '/api/v1/namespaces/demo/pods/web-1/log?follow=true');
  admitted.release();
  assert.equal(browserRequests.length, 1);
  const noMethod = await admit(withoutMethod(request(log, { cookie: 'session=dana' })));
  assert.equal(noMethod.principal.subject, 'dana', 'a request without a method is a GET');
  noMethod.release();
  browserRequests.length = 0;
  const elsewhere: Array<[string, string, string | undefined]> = [
    ['/k8s/prod-eu/api/v1/namespaces/demo/pods/web-1', 'GET', undefined],
    [log, 'POST', undefined],
    [log, 'GET', 'websocket'],
  ];
  for (const [url, method, upgrade] of elsewhere) {
    const refusal = await refusalOf(admit(request(url, { cookie: 'session=dana' }, method), upgrade));
    assert.equal(refusal.status, 401, `${method} ${url} ${upgrade}`);
  }
  assert.equal(browserRequests.length, 0, 'the session is not even looked at elsewhere');
  assert.deepEqual(refused, []);
});

test('a session refused for its CSRF headers is 403, an ended one 401, a failing resolver 401 without its detail', async () => {
  const { admit, refused } = admission();
  const log = '/k8s/prod-eu/api/v1/namespaces/demo/pods/web-1/log';
  const forged = await refusalOf(admit(request(log, { cookie: 'session=forged' })));
  assert.equal(forged.status, 403);
  assert.equal(forged.message, 'the CSRF header is missing');
  const ended = await refusalOf(admit(request(log, { cookie: 'session=ended' })));
  assert.equal(ended.status, 401);
  assert.equal(ended.message, 'the session ended');
  const broken = await refusalOf(admit(request(log, { cookie: 'session=other' })));
  assert.equal(broken.status, 401);
  assert.equal(broken.message, 'authentication failed');
  assert.deepEqual(refused, [], 'the resolver records a CSRF refusal itself');
});

test('without the kube role: 403, recorded with who asked, the method upper-cased and the checked path', async () => {
  const { admit, refused } = admission();
  const refusal = await refusalOf(admit(request('/k8s/prod-eu/api/v1/pods?limit=1', bearer(READER), 'delete')));
  assert.equal(refusal.status, 403);
  assert.equal(refusal.message, 'reader lacks the role "kube" required for /k8s/prod-eu');
  const noMethod = await refusalOf(admit(withoutMethod(request('/k8s/prod-eu/version', bearer(READER)))));
  assert.equal(noMethod.status, 403);
  assert.deepEqual(refused, [
    {
      principal: 'token:reader',
      groups: [],
      account: 'prod-eu',
      method: 'DELETE',
      path: '/api/v1/pods?limit=1',
      status: 403,
      message: 'reader lacks the role "kube" required for /k8s/prod-eu',
    },
    {
      principal: 'token:reader',
      groups: [],
      account: 'prod-eu',
      method: 'GET',
      path: '/version',
      status: 403,
      message: 'reader lacks the role "kube" required for /k8s/prod-eu',
    },
  ]);
});

test("an account outside the kube rule: 403, recorded with the caller's groups", async () => {
  const { admit, refused } = admission();
  const refusal = await refusalOf(admit(request('/k8s/staging/api', bearer(ALICE), 'GET')));
  assert.equal(refusal.status, 403);
  assert.equal(refusal.message, 'alice may not reach account "staging" (authorization.rules: kube role and accounts)');
  assert.deepEqual(refused, [
    { principal: 'token:alice', groups: ['devs'], account: 'staging', method: 'GET', path: '/api', status: 403, message: refusal.message },
  ]);
});

test('an upgrade is admitted for WebSocket only, in any case; anything else is 400 naming the protocol, recorded', async () => {
  const { admit, refused } = admission();
  const exec = '/k8s/prod-eu/api/v1/namespaces/demo/pods/web-1/exec?command=ls';
  for (const upgrade of ['websocket', 'WebSocket', 'WEBSOCKET']) {
    const admitted = await admit(request(exec, bearer(ALICE)), upgrade);
    assert.equal(admitted.path, '/api/v1/namespaces/demo/pods/web-1/exec?command=ls');
    admitted.release();
  }
  for (const upgrade of ['SPDY/3.1', 'websocket2', 'xwebsocket', 'websocket, SPDY/3.1', '', `h2c${'-'.repeat(60)}`]) {
    const refusal = await refusalOf(admit(request(exec, bearer(ALICE)), upgrade));
    assert.equal(refusal.status, 400, upgrade);
    assert.equal(
      refusal.message,
      `Outpost carries exec, attach and port-forward over WebSocket only, not "${upgrade.slice(0, 40)}": ` +
        'use kubectl 1.30 or later (1.29: KUBECTL_REMOTE_COMMAND_WEBSOCKETS=true; port-forward needs 1.31+)',
    );
  }
  assert.equal(refused.length, 6);
  assert.deepEqual(
    refused.map((r) => [r.principal, r.status]),
    Array(6).fill(['token:alice', 400]),
  );
  // Without the kube role the role is what is refused, whatever the protocol.
  const reader = await refusalOf(admit(request(exec, bearer(READER)), 'SPDY/3.1'));
  assert.equal(reader.status, 403);
});

test('a caller whose name cannot be impersonated is refused 403 with the reason, and recorded', async () => {
  const { admit, refused } = admission({ userPrefix: '', groupsPrefix: '' });
  const refusal = await refusalOf(admit(request('/k8s/prod-eu/api', bearer(ROOT))));
  assert.equal(refusal.status, 403);
  assert.equal(
    refusal.message,
    '"system:admin" is in the cluster\'s reserved system: namespace; set kube.userPrefix and kube.groupsPrefix',
  );
  assert.deepEqual(
    refused.map((r) => [r.principal, r.status, r.message]),
    [['token:system:admin', 403, refusal.message]],
  );
  const prefixed = await admission().admit(request('/k8s/prod-eu/api', bearer(ROOT)));
  assert.equal(prefixed.caller.user, 'outpost:system:admin');
  prefixed.release();
});

test('a caller header from anyone but a replica is 403, recorded as the one who sent it', async () => {
  const { admit, refused } = admission();
  const header = encodeDescription({ method: 'token', subject: 'system:admin', groups: [] });
  const refusal = await refusalOf(admit(request('/k8s/prod-eu/api', { ...bearer(ALICE), [CALLER_HEADER]: header })));
  assert.equal(refusal.status, 403);
  assert.equal(refusal.message, 'alice lacks the role "replica" required for /k8s/prod-eu');
  assert.deepEqual(
    refused.map((r) => [r.principal, r.status]),
    [['token:alice', 403]],
  );
});

test("a replica's forward is admitted as its caller: this replica's rules and mapping, not counted against the identity", async () => {
  const { admit, refused } = admission({ maxConcurrentPerIdentity: 1, maxConcurrentPerAccount: 3 });
  const bob = encodeDescription(describePrincipal(principalFromRules('bob', 'token', [], undefined, {}, ['sre'])));
  const forward = async () => admit(request('/k8s/prod-eu/api/v1/pods', { ...bearer(await replicaSigner.token()), [CALLER_HEADER]: bob }));
  const first = await forward();
  assert.equal(first.forwarded, true);
  assert.equal(first.principal.subject, 'bob');
  assert.equal(first.principal.roles.has('kube'), true, "the role comes from this replica's rule for bob");
  assert.deepEqual(first.caller, { principal: 'token:bob', principalGroups: ['sre'], user: 'outpost:bob', groups: ['outpost:sre'] });
  const second = await forward();
  assert.equal(second.forwarded, true, 'the identity limit of 1 is the forwarding replica’s to apply');
  // The account limit applies to forwards: the third request takes the last slot, the fourth is refused.
  const direct = await admit(request('/k8s/prod-eu/api', bearer(ALICE)));
  const over = await refusalOf(forward());
  assert.equal(over.status, 429);
  assert.equal(over.message, 'account "prod-eu" already has 3 Kubernetes API requests open (kube.maxConcurrentPerAccount)');
  for (const a of [first, second, direct]) a.release();
  assert.deepEqual(refused, [], "a replica's forward is recorded by the replica that forwarded it");
});

test("a replica's forward refused here is not recorded here: no kube role for the caller, a malformed header", async () => {
  const { admit, refused } = admission();
  const reader = encodeDescription({ method: 'token', subject: 'reader', groups: [] });
  const noRole = await refusalOf(admit(request('/k8s/prod-eu/api', { ...bearer(await replicaSigner.token()), [CALLER_HEADER]: reader })));
  assert.equal(noRole.status, 403);
  assert.equal(noRole.message, 'reader lacks the role "kube" required for /k8s/prod-eu');
  const outside = encodeDescription({ method: 'token', subject: 'alice', groups: [] });
  const account = await refusalOf(admit(request('/k8s/staging/api', { ...bearer(await replicaSigner.token()), [CALLER_HEADER]: outside })));
  assert.equal(account.status, 403);
  assert.equal(account.message, 'alice may not reach account "staging" (authorization.rules: kube role and accounts)');
  for (const header of ['not base64 json', encodeDescription({ method: 'token', subject: '', groups: [] }), '']) {
    const malformed = await refusalOf(
      admit(request('/k8s/prod-eu/api', { ...bearer(await replicaSigner.token()), [CALLER_HEADER]: header })),
    );
    assert.equal(malformed.status, 400, header);
    assert.equal(malformed.message, 'malformed x-outpost-kube-caller header');
  }
  assert.deepEqual(refused, []);
});

test('a replica without a caller header is a caller itself: it has no kube role, and that refusal is recorded', async () => {
  const { admit, refused } = admission();
  const refusal = await refusalOf(admit(request('/k8s/prod-eu/api', bearer(await replicaSigner.token()))));
  assert.equal(refusal.status, 403);
  assert.equal(refusal.message, 'replica:r2 lacks the role "kube" required for /k8s/prod-eu');
  assert.deepEqual(refused, [
    { principal: 'replica:replica:r2', groups: [], account: 'prod-eu', method: 'GET', path: '/api', status: 403, message: refusal.message },
  ]);
});

test('the limits: per identity and per account, 429 with Retry-After, recorded; a release frees the slot once', async () => {
  const { admit, refused } = admission({ maxConcurrentPerIdentity: 2, maxConcurrentPerAccount: 3 });
  const get = (account = 'prod-eu') => admit(request(`/k8s/${account}/api`, bearer(ALICE)));
  const a = await get();
  const b = await get('prod-us');
  const identity = await refusalOf(get());
  assert.equal(identity.status, 429);
  assert.equal(identity.message, 'token:alice already has 2 Kubernetes API requests open (kube.maxConcurrentPerIdentity)');
  assert.deepEqual(identity.headers, { 'retry-after': '1' });
  a.release();
  a.release();
  const c = await get();
  const again = await refusalOf(get());
  assert.equal(again.status, 429, 'a second release of the same slot frees nothing');
  b.release();
  c.release();
  const dana = { cookie: 'session=dana' };
  const log = '/k8s/prod-eu/api/v1/namespaces/demo/pods/web-1/log';
  const held = [await get(), await get(), await admit(request(log, dana))];
  const account = await refusalOf(admit(request(log, dana)));
  assert.equal(account.status, 429);
  assert.equal(account.message, 'account "prod-eu" already has 3 Kubernetes API requests open (kube.maxConcurrentPerAccount)');
  for (const h of held) h.release();
  assert.deepEqual(
    refused.map((r) => [r.principal, r.status]),
    [
      ['token:alice', 429],
      ['token:alice', 429],
      ['token:dana', 429],
    ],
  );
});
