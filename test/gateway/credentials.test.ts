/**
 * How the credentials of a request are read from its headers and its TLS socket before any body is read: the bearer
 * token (and only a well-formed `Bearer <token>`), the scheme of any other Authorization header, the client
 * certificate with the TLS layer's verdict, and the dashboard's cookies and CSRF headers only where a surface asks for
 * them. Every credential the authenticator trusts comes from here, so each reading is pinned exactly.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { test } from 'node:test';
import { credentialsFromNodeRequest } from '../../src/gateway/auth/credentials.js';

type FakeRequest = {
  headers: Record<string, string | string[] | undefined>;
  socket?: Record<string, unknown>;
  method?: string;
  url?: string;
};

const read = (req: FakeRequest, options?: { browser?: boolean }) =>
  credentialsFromNodeRequest(req as unknown as http.IncomingMessage, options);

const withAuthorization = (authorization: string | string[]) => read({ headers: { authorization }, socket: {} });

test('a Bearer header gives its token, whatever the case of the scheme and the spaces around the token', () => {
  assert.deepEqual(withAuthorization('Bearer abc.def-123'), { secure: false, bearer: 'abc.def-123' });
  assert.deepEqual(withAuthorization('bearer tok'), { secure: false, bearer: 'tok' });
  assert.deepEqual(withAuthorization('BEARER   tok  '), { secure: false, bearer: 'tok' });
  assert.deepEqual(withAuthorization('Bearer\ttok'), { secure: false, bearer: 'tok' });
});

test('only the first of repeated Authorization headers is read', () => {
  assert.deepEqual(withAuthorization(['Bearer first', 'Bearer second']), { secure: false, bearer: 'first' });
  assert.deepEqual(withAuthorization(['Basic eA==', 'Bearer second']), { secure: false, otherAuthorization: 'Basic' });
});

test('anything but a well-formed Bearer header gives no token, only the scheme it was sent in', () => {
  assert.deepEqual(withAuthorization('Basic dXNlcjpwYXNz'), { secure: false, otherAuthorization: 'Basic' });
  assert.deepEqual(withAuthorization('Bearer a b'), { secure: false, otherAuthorization: 'Bearer' });
  assert.deepEqual(withAuthorization('Bearer'), { secure: false, otherAuthorization: 'Bearer' });
  assert.deepEqual(withAuthorization('Bearer '), { secure: false, otherAuthorization: 'Bearer' });
  assert.deepEqual(withAuthorization('XBearer tok'), { secure: false, otherAuthorization: 'XBearer' });
  assert.deepEqual(withAuthorization('Bearertok'), { secure: false, otherAuthorization: 'Bearertok' });
  assert.deepEqual(withAuthorization('Token\tabc'), { secure: false, otherAuthorization: 'Token' });
});

test('an empty or missing Authorization header is no credential at all', () => {
  assert.deepEqual(withAuthorization(''), { secure: false });
  assert.deepEqual(read({ headers: {}, socket: {} }), { secure: false });
  assert.deepEqual(read({ headers: {} }), { secure: false });
});

const certificate = {
  subject: { CN: 'agent-1,O=admins', O: ['Example', 'Ops'], C: 'DE' },
  fingerprint256: 'AB:CD:0F:12',
};

test('a certificate verified by the TLS layer is read with its subject, attributes and fingerprint', () => {
  const got = read({ headers: {}, socket: { authorized: true, getPeerCertificate: () => certificate } });
  assert.deepEqual(got, {
    secure: true,
    certificate: {
      attributes: { CN: ['agent-1,O=admins'], O: ['Example', 'Ops'], C: ['DE'] },
      authorized: true,
      authorizationError: undefined,
      subject: 'CN=agent-1\\,O=admins,O=Example,O=Ops,C=DE',
      fingerprint: 'abcd0f12',
    },
  });
});

test('a certificate the TLS layer refused is read as not authorized, with the reason', () => {
  const got = read({
    headers: { authorization: 'Bearer tok' },
    socket: { authorized: false, authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', getPeerCertificate: () => certificate },
  });
  assert.equal(got.bearer, 'tok');
  assert.equal(got.certificate?.authorized, false);
  assert.equal(got.certificate?.authorizationError, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  const error = read({ headers: {}, socket: { authorizationError: new Error('CERT_HAS_EXPIRED'), getPeerCertificate: () => certificate } });
  assert.equal(error.certificate?.authorized, false);
  assert.equal(error.certificate?.authorizationError, 'Error: CERT_HAS_EXPIRED');
});

test('a certificate without a fingerprint has an empty one', () => {
  const got = read({ headers: {}, socket: { authorized: true, getPeerCertificate: () => ({ subject: { CN: 'x' } }) } });
  assert.equal(got.certificate?.fingerprint, '');
  assert.equal(got.certificate?.subject, 'CN=x');
});

test('a TLS connection without a usable certificate is secure but has none', () => {
  const cases: (() => unknown)[] = [
    () => ({}),
    () => null,
    () => ({ fingerprint256: 'AB:CD' }),
    () => {
      throw new Error('socket torn down');
    },
  ];
  for (const getPeerCertificate of cases) {
    assert.deepEqual(read({ headers: {}, socket: { authorized: true, getPeerCertificate } }), { secure: true });
  }
});

test('the certificate is asked for without its issuer chain', () => {
  const asked: unknown[] = [];
  read({ headers: {}, socket: { getPeerCertificate: (...args: unknown[]) => (asked.push(args), {}) } });
  assert.deepEqual(asked, [[false]]);
});

const browserHeaders = {
  cookie: 'outpost_session=s1',
  'x-outpost-csrf': 'c1',
  origin: 'https://outpost.example',
  'sec-fetch-site': 'same-origin',
};

test('the cookies and CSRF headers are read only where the surface asks for them', () => {
  const req = { headers: browserHeaders, socket: {}, method: 'post', url: '/api/things?x=1?y' };
  assert.deepEqual(read(req, { browser: true }), {
    secure: false,
    browser: {
      cookie: 'outpost_session=s1',
      csrf: 'c1',
      origin: 'https://outpost.example',
      fetchSite: 'same-origin',
      method: 'POST',
      path: '/api/things',
    },
  });
  assert.deepEqual(read(req), { secure: false });
  assert.deepEqual(read(req, {}), { secure: false });
  assert.deepEqual(read(req, { browser: false }), { secure: false });
});

test('a request without cookies has no browser session to read', () => {
  const { cookie: _, ...noCookie } = browserHeaders;
  assert.deepEqual(read({ headers: noCookie, socket: {} }, { browser: true }), { secure: false, browser: undefined });
  assert.deepEqual(read({ headers: { ...noCookie, cookie: '' }, socket: {} }, { browser: true }), {
    secure: false,
    browser: undefined,
  });
});

test('repeated cookie headers are joined, repeated other headers give their first value, and method and path default', () => {
  const got = read(
    {
      headers: { cookie: ['a=1', 'b=2'], 'x-outpost-csrf': ['c1', 'c2'], origin: ['o1', 'o2'], 'sec-fetch-site': ['none', 'x'] },
      socket: {},
    },
    { browser: true },
  );
  assert.deepEqual(got.browser, { cookie: 'a=1; b=2', csrf: 'c1', origin: 'o1', fetchSite: 'none', method: 'GET', path: '/' });
  const bare = read({ headers: { cookie: 'a=1' }, socket: {}, method: 'DELETE', url: '/x' }, { browser: true });
  assert.deepEqual(bare.browser, { cookie: 'a=1', csrf: undefined, origin: undefined, fetchSite: undefined, method: 'DELETE', path: '/x' });
});
