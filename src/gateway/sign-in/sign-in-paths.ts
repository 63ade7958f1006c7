/**
 * The paths of sign-in (`/auth/…`): what authorization asks of them before routing. They require nothing there — the
 * provider list and the sign-in redirects are for people not signed in yet — and the routes that act for a signed-in
 * person (the session, sign-out) authenticate the request themselves.
 */
import type { PathRule } from '../auth/authorization.js';

/** The prefix of every sign-in path. */
export const SIGN_IN_PREFIX = '/auth';

/** `/auth` and everything below it: admitted without credentials (the routes check what they need). */
export const SIGN_IN_PATH_RULE: PathRule = {
  name: 'sign-in (`/auth/…`)',
  requirement: 'none',
  matches: (path) => path === SIGN_IN_PREFIX || path.startsWith(`${SIGN_IN_PREFIX}/`),
};
