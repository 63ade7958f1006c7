/**
 * The three CSRF rules every request authenticated by the dashboard's session cookie follows
 * (src/gateway/sign-in/csrf-rules.ts, docs/security.md "The dashboard's sessions"): no cross-site nor same-site
 * `Sec-Fetch-Site`, no foreign `Origin`, and the `X-Outpost-CSRF` header equal to the session's token — except for
 * `GET /auth/session`, which needs no header but follows the other two. Each refusal says which rule.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { csrfRefusal } from '../../src/gateway/sign-in/csrf-rules.js';

const TOKEN = 'Zq3-csrf-token-of-the-session_0123456789abcdefghi';
const ORIGIN = 'https://outpost.example.com';
const expected = { csrfToken: TOKEN, origin: ORIGIN, headerRequired: true };
const exempt = { ...expected, headerRequired: false };

const NO_HEADER =
  'a request authenticated by the dashboard session must carry the X-Outpost-CSRF header (its value is the csrfToken of GET /auth/session)';
const WRONG_HEADER = 'the X-Outpost-CSRF header does not match the dashboard session';
const crossSite = 'a cross-site request (Sec-Fetch-Site: cross-site) may not use the dashboard session';
const sameSite = 'a same-site request (Sec-Fetch-Site: same-site) may not use the dashboard session';
const foreign = (origin: string) =>
  `the request comes from origin ${JSON.stringify(origin)}, not the gateway's https://outpost.example.com (auth.oidc.externalUrl)`;

describe('a request that follows the rules', () => {
  test("the dashboard's own request passes: same-origin, the gateway's origin, the right header", () => {
    assert.equal(csrfRefusal({ csrf: TOKEN, origin: ORIGIN, fetchSite: 'same-origin' }, expected), undefined);
  });

  test('an older browser sending neither Sec-Fetch-Site nor Origin passes on the header alone', () => {
    assert.equal(csrfRefusal({ csrf: TOKEN }, expected), undefined);
  });

  test('a navigation the person typed (Sec-Fetch-Site: none) passes', () => {
    assert.equal(csrfRefusal({ csrf: TOKEN, fetchSite: 'none' }, expected), undefined);
  });

  test('GET /auth/session needs no header, and passes without one', () => {
    assert.equal(csrfRefusal({ origin: ORIGIN, fetchSite: 'same-origin' }, exempt), undefined);
    assert.equal(csrfRefusal({}, exempt), undefined);
  });
});

describe('the first rule, Sec-Fetch-Site', () => {
  test('a cross-site request is refused, even with the right header and origin, and the refusal names it', () => {
    assert.equal(csrfRefusal({ csrf: TOKEN, origin: ORIGIN, fetchSite: 'cross-site' }, expected), crossSite);
  });

  test('a same-site request (a sibling host) is refused too', () => {
    assert.equal(csrfRefusal({ csrf: TOKEN, origin: ORIGIN, fetchSite: 'same-site' }, expected), sameSite);
  });

  test('the header value is read without case', () => {
    assert.equal(csrfRefusal({ csrf: TOKEN, fetchSite: 'Cross-Site' }, expected), crossSite);
    assert.equal(csrfRefusal({ csrf: TOKEN, fetchSite: 'SAME-SITE' }, expected), sameSite);
  });

  test('GET /auth/session is not exempt from it', () => {
    assert.equal(csrfRefusal({ fetchSite: 'cross-site' }, exempt), crossSite);
    assert.equal(csrfRefusal({ fetchSite: 'same-site' }, exempt), sameSite);
  });

  test('it is checked first: a cross-site request from a foreign origin without a header is refused as cross-site', () => {
    assert.equal(csrfRefusal({ origin: 'https://evil.example', fetchSite: 'cross-site' }, expected), crossSite);
  });
});

describe('the second rule, Origin', () => {
  test("an origin other than the gateway's is refused, even with the right header, naming both", () => {
    assert.equal(
      csrfRefusal({ csrf: TOKEN, origin: 'https://evil.example', fetchSite: 'same-origin' }, expected),
      foreign('https://evil.example'),
    );
  });

  test("another port, scheme or sibling host is another origin; so is the opaque origin 'null'", () => {
    for (const origin of ['https://outpost.example.com:8443', 'http://outpost.example.com', 'https://a.outpost.example.com', 'null']) {
      assert.equal(csrfRefusal({ csrf: TOKEN, origin }, expected), foreign(origin), origin);
    }
  });

  test('GET /auth/session is not exempt from it', () => {
    assert.equal(csrfRefusal({ origin: 'https://evil.example' }, exempt), foreign('https://evil.example'));
  });

  test('it is checked before the header: a foreign origin without a header is refused for its origin', () => {
    assert.equal(csrfRefusal({ origin: 'https://evil.example' }, expected), foreign('https://evil.example'));
  });
});

describe('the third rule, X-Outpost-CSRF', () => {
  test('a request without the header is refused, saying where the token comes from', () => {
    assert.equal(csrfRefusal({ origin: ORIGIN, fetchSite: 'same-origin' }, expected), NO_HEADER);
  });

  test('an empty header counts as none', () => {
    assert.equal(csrfRefusal({ csrf: '', origin: ORIGIN }, expected), NO_HEADER);
  });

  test('a header of another value is refused: another session, a prefix, another case', () => {
    for (const csrf of ['other', TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.toUpperCase(), ` ${TOKEN}`]) {
      assert.equal(csrfRefusal({ csrf, origin: ORIGIN }, expected), WRONG_HEADER, csrf);
    }
  });

  test('GET /auth/session is not refused for a wrong header either: it needs none', () => {
    assert.equal(csrfRefusal({ csrf: 'other' }, exempt), undefined);
  });
});
