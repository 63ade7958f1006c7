/**
 * The dashboard's two cookies (src/gateway/sign-in/session-cookies.ts, docs/sign-in.md "The dashboard"): when they
 * are Secure with the `__Host-` prefix, their exact attributes, the shape of a session secret, the row key and CSRF
 * token derived from it, the constant-time comparison, and how a `Cookie` header is read.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  clearedLoginCookie,
  clearedSessionCookie,
  cookieScopeOf,
  csrfTokenOf,
  isSessionSecret,
  LOGIN_COOKIE,
  LOGIN_COOKIE_SECONDS,
  loginCookie,
  newSessionSecret,
  readCookie,
  sameSecret,
  sessionCookie,
  sessionCookieName,
  sessionKeyOf,
} from '../../src/gateway/sign-in/session-cookies.js';

const SECURE = { secure: true };
const PLAIN = { secure: false };
const SECRET = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';

describe('where the cookies are Secure', () => {
  test('an https external URL makes them Secure, on any host and port', () => {
    assert.deepEqual(cookieScopeOf('https://outpost.example.com'), SECURE);
    assert.deepEqual(cookieScopeOf('https://outpost.example.com:8443/base'), SECURE);
  });

  test('so do the loopback hosts browsers count as secure over plain http', () => {
    assert.deepEqual(cookieScopeOf('http://127.0.0.1:8080'), SECURE);
    assert.deepEqual(cookieScopeOf('http://localhost:3000'), SECURE);
    assert.deepEqual(cookieScopeOf('http://LOCALHOST'), SECURE);
    assert.deepEqual(cookieScopeOf('http://[::1]:8080'), SECURE);
  });

  test('plain http to any other host is not Secure (use https)', () => {
    assert.deepEqual(cookieScopeOf('http://outpost.example.com'), PLAIN);
    assert.deepEqual(cookieScopeOf('http://10.0.0.1:8080'), PLAIN);
    assert.deepEqual(cookieScopeOf('http://localhost.example.com'), PLAIN);
    assert.deepEqual(cookieScopeOf('http://127.0.0.2'), PLAIN);
  });

  test('the session cookie has the __Host- prefix exactly when it is Secure', () => {
    assert.equal(sessionCookieName(SECURE), '__Host-outpost-session');
    assert.equal(sessionCookieName(PLAIN), 'outpost-session');
  });
});

describe('the Set-Cookie headers', () => {
  test('the session cookie: HttpOnly, SameSite=Strict, Path=/, kept for whole seconds of the session, Secure when it may be', () => {
    assert.equal(
      sessionCookie(SECURE, SECRET, 43_200),
      `__Host-outpost-session=${SECRET}; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure`,
    );
    assert.equal(sessionCookie(PLAIN, SECRET, 3599.9), `outpost-session=${SECRET}; Path=/; Max-Age=3599; HttpOnly; SameSite=Strict`);
  });

  test('signing out clears the session cookie of the same name and attributes', () => {
    assert.equal(clearedSessionCookie(SECURE), '__Host-outpost-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure');
    assert.equal(clearedSessionCookie(PLAIN), 'outpost-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
  });

  test('the login cookie: HttpOnly, SameSite=Lax (it must come back with the redirect), scoped to the callback, ten minutes', () => {
    assert.equal(LOGIN_COOKIE, 'outpost-login');
    assert.equal(LOGIN_COOKIE_SECONDS, 600);
    assert.equal(
      loginCookie(SECURE, 'sealed', '/auth/oidc/corp/callback'),
      'outpost-login=sealed; Path=/auth/oidc/corp/callback; Max-Age=600; HttpOnly; SameSite=Lax; Secure',
    );
    assert.equal(
      loginCookie(PLAIN, 'sealed', '/auth/oidc/corp/callback'),
      'outpost-login=sealed; Path=/auth/oidc/corp/callback; Max-Age=600; HttpOnly; SameSite=Lax',
    );
  });

  test('the callback clears the login cookie of its path', () => {
    assert.equal(
      clearedLoginCookie(SECURE, '/auth/oidc/corp/callback'),
      'outpost-login=; Path=/auth/oidc/corp/callback; Max-Age=0; HttpOnly; SameSite=Lax; Secure',
    );
    assert.equal(
      clearedLoginCookie(PLAIN, '/auth/oidc/corp/callback'),
      'outpost-login=; Path=/auth/oidc/corp/callback; Max-Age=0; HttpOnly; SameSite=Lax',
    );
  });
});

describe('the session secret and what is derived from it', () => {
  test('a new secret is 256 random bits in base64url (43 characters), never the same twice', () => {
    const a = newSessionSecret();
    const b = newSessionSecret();
    assert.match(a, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(a, 'base64url').length, 32);
    assert.equal(isSessionSecret(a), true);
    assert.notEqual(a, b);
  });

  test('only 43 base64url characters name a session: no padding, no standard base64, nothing around', () => {
    assert.equal(isSessionSecret(SECRET), true);
    for (const value of [
      SECRET.slice(1),
      `${SECRET}a`,
      `!${SECRET}`,
      `${SECRET}!`,
      `${SECRET.slice(1)}=`,
      `${SECRET.slice(1)}+`,
      `${SECRET.slice(1)}/`,
      `${SECRET.slice(1)}.`,
      `${SECRET.slice(1)} `,
      '',
      "' OR 1=1 --",
    ]) {
      assert.equal(isSessionSecret(value), false, value);
    }
  });

  test("a session's row key is the SHA-256 (hex) of its secret: the table holds no cookie", () => {
    const key = sessionKeyOf(SECRET);
    assert.equal(key, createHash('sha256').update(SECRET).digest('hex'));
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.notEqual(sessionKeyOf(`${SECRET.slice(1)}x`), key);
  });

  test("the CSRF token is the HMAC-SHA-256 of 'outpost-csrf-v1' keyed by the secret: neither the secret nor its row key", () => {
    const token = csrfTokenOf(SECRET);
    assert.equal(token, createHmac('sha256', SECRET).update('outpost-csrf-v1').digest('base64url'));
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(token, SECRET);
    assert.notEqual(csrfTokenOf(`${SECRET.slice(1)}x`), token);
  });

  test('secrets compare equal only when they are equal, whatever their lengths', () => {
    assert.equal(sameSecret(SECRET, SECRET), true);
    assert.equal(sameSecret('', ''), true);
    assert.equal(sameSecret(SECRET, `${SECRET.slice(1)}x`), false);
    assert.equal(sameSecret(SECRET, SECRET.slice(1)), false);
    assert.equal(sameSecret(SECRET, ''), false);
    assert.equal(sameSecret('é', 'e'), false);
  });
});

describe('reading a Cookie header', () => {
  test('gives the named cookie among others, without the spaces around it', () => {
    assert.equal(readCookie('a=1; outpost-session=xyz; b=2', 'outpost-session'), 'xyz');
    assert.equal(readCookie('outpost-session=xyz', 'outpost-session'), 'xyz');
    assert.equal(readCookie('a=1;outpost-session = xyz ;b=2', 'outpost-session'), 'xyz');
    assert.equal(readCookie('a=1;  outpost-session=  xyz', 'outpost-session'), 'xyz');
  });

  test('a value may hold "=" and stays whole', () => {
    assert.equal(readCookie('outpost-login=a=b==', 'outpost-login'), 'a=b==');
  });

  test('the first of two cookies of the same name is the one read', () => {
    assert.equal(readCookie('outpost-session=first; outpost-session=second', 'outpost-session'), 'first');
  });

  test('a name is matched whole and with its case: not a prefix, a suffix, the __Host- one, nor a part without "="', () => {
    assert.equal(readCookie('xoutpost-session=1; outpost-session-x=2; __Host-outpost-session=3', 'outpost-session'), undefined);
    assert.equal(readCookie('Outpost-Session=1', 'outpost-session'), undefined);
    assert.equal(readCookie('outpost-sessionX', 'outpost-session'), undefined);
    assert.equal(readCookie('outpost-sessionX; outpost-session=real', 'outpost-session'), 'real');
    assert.equal(readCookie('=orphan; outpost-session=real', 'outpost-session'), 'real');
  });

  test('an absent or empty header gives nothing; an empty value is an empty string', () => {
    assert.equal(readCookie(undefined, 'outpost-session'), undefined);
    assert.equal(readCookie('', 'outpost-session'), undefined);
    assert.equal(readCookie('a=1', 'outpost-session'), undefined);
    assert.equal(readCookie('outpost-session=', 'outpost-session'), '');
  });
});
