/**
 * The rules a request authenticated by the dashboard's session cookie must follow (docs/security.md, "The
 * dashboard's sessions"), since a browser attaches the cookie to requests other sites make it send:
 *
 * 1. `Sec-Fetch-Site`, when sent, is not `cross-site` nor `same-site` (a sibling host is another party too);
 * 2. `Origin`, when sent, is the gateway's external URL's origin (no CORS header is ever answered, so another origin
 *    cannot read an answer anyway; this refuses the writes it could cause);
 * 3. the `X-Outpost-CSRF` header equals the session's CSRF token (compared in constant time), which only a page of
 *    the gateway's own origin can learn (`GET /auth/session`, the one request exempt from this third rule).
 *
 * Every surface that accepts the cookie applies all three — Connect POST and GET, REST GET and POST alike: a read is
 * refused too, so a leaked token or an old browser without `Sec-Fetch-*` still gives another site nothing.
 */
import { CSRF_HEADER, type BrowserRequest } from '../auth/browser-session.js';
import { sameSecret } from './session-cookies.js';

/** Why the request breaks the rules, or undefined when it follows them. */
export function csrfRefusal(
  request: Pick<BrowserRequest, 'csrf' | 'origin' | 'fetchSite'>,
  expected: { csrfToken: string; origin: string; headerRequired: boolean },
): string | undefined {
  const site = request.fetchSite?.toLowerCase();
  if (site === 'cross-site' || site === 'same-site') {
    return `a ${site} request (Sec-Fetch-Site: ${site}) may not use the dashboard session`;
  }
  if (request.origin !== undefined && request.origin !== expected.origin) {
    return `the request comes from origin ${JSON.stringify(request.origin)}, not the gateway's ${expected.origin} (auth.oidc.externalUrl)`;
  }
  if (!expected.headerRequired) return undefined;
  if (request.csrf === undefined || request.csrf === '') {
    return `a request authenticated by the dashboard session must carry the ${CSRF_HEADER} header (its value is the csrfToken of GET /auth/session)`;
  }
  if (!sameSecret(request.csrf, expected.csrfToken)) return `the ${CSRF_HEADER} header does not match the dashboard session`;
  return undefined;
}
