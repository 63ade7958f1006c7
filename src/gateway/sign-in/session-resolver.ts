/**
 * The dashboard's session as a credential (the {@link SessionResolver} the sign-in module hands the authenticator):
 * the session cookie names a session row; the request must follow the CSRF rules (csrf-rules.ts) before the session
 * is even renewed or touched; the principal is `oidc:<provider>:<username>` with the roles the rules give the
 * session's groups — exactly what a bearer ID token of the same person gets. A refusal by the CSRF rules is audited
 * (kind `session`, verb `refused`) and answered PERMISSION_DENIED; a session that ended, UNAUTHENTICATED.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { BrowserRequest, SessionResolver } from '../auth/browser-session.js';
import { principalFromRules, type Principal } from '../auth/principal.js';
import type { AuthorizationRule } from '../config/schema.js';
import { csrfRefusal } from './csrf-rules.js';
import { cookieScopeOf, csrfTokenOf, readCookie, sessionCookieName } from './session-cookies.js';
import { sessionAuditEntry } from './sign-in-audit.js';
import type { SignInContext } from './sign-in-context.js';
import type { WebSession } from './web-sessions.js';

/** Creates the resolver over the sign-in context. */
export function createSessionResolver(ctx: SignInContext): SessionResolver {
  return {
    async authenticate(request) {
      const secret = sessionSecretOf(ctx, request.cookie);
      if (secret === undefined) return undefined;
      await enforceCsrfRules(ctx, request, secret, true);
      return sessionPrincipal(ctx.rules, await ctx.sessions.resolve(secret));
    },
  };
}

/** The session cookie's value in a `Cookie` header, or undefined. */
export function sessionSecretOf(ctx: Pick<SignInContext, 'externalUrl'>, cookieHeader: string | undefined): string | undefined {
  return readCookie(cookieHeader, sessionCookieName(cookieScopeOf(ctx.externalUrl())));
}

/**
 * Checks the CSRF rules for a request carrying the session `secret` (`headerRequired` false only for
 * `GET /auth/session`). A refusal is audited with the session's person and rejected PERMISSION_DENIED; when the
 * cookie names no live session there is nobody to audit, and the rejection is UNAUTHENTICATED.
 */
export async function enforceCsrfRules(
  ctx: SignInContext,
  request: Pick<BrowserRequest, 'csrf' | 'origin' | 'fetchSite' | 'path'>,
  secret: string,
  headerRequired: boolean,
): Promise<void> {
  const refusal = csrfRefusal(request, {
    csrfToken: csrfTokenOf(secret),
    origin: new URL(ctx.externalUrl()).origin,
    headerRequired,
  });
  if (refusal === undefined) return;
  const session = await ctx.sessions.peek(secret);
  if (!session)
    throw new ConnectError('no such dashboard session (signed out, ended, or of another gateway); sign in again', Code.Unauthenticated);
  const message = `refused: ${refusal}`;
  ctx.audit.record(
    sessionAuditEntry({
      verb: 'refused',
      subject: session.subject,
      groups: session.groups,
      path: request.path,
      status: 403,
      error: message,
      at: new Date(ctx.clock()),
    }),
  );
  ctx.logger.warn({ subject: session.subject, path: request.path, refusal }, 'dashboard session request refused');
  throw new ConnectError(message, Code.PermissionDenied);
}

/** The principal of a session: as for a bearer ID token of the same person, until the session's absolute end. */
export function sessionPrincipal(rules: readonly AuthorizationRule[], session: WebSession): Principal {
  return principalFromRules(session.subject, 'oidc', rules, session.expiresAt.getTime(), {}, session.groups);
}
