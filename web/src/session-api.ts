import type { SignedIn } from './auth.js';

/**
 * The gateway's sign-in routes as the page uses them (same origin, so the session cookie goes along and no CORS is
 * involved): who is signed in (`GET /auth/session`, which also gives the session's CSRF token), the providers to
 * offer (`GET /auth/providers`), signing out (`POST /auth/logout`). A gateway without `auth.oidc` answers 404 to
 * all of them: the page then offers the access-token form alone.
 */

/** A provider the sign-in page offers a button for. */
export interface ProviderOption {
  name: string;
  displayName: string;
}

/** Who is signed in: the dashboard session, or the holder of `token` when one is stored; null for nobody. */
export async function fetchWhoAmI(token: string | null): Promise<SignedIn | null> {
  try {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch('/auth/session', { headers, cache: 'no-store' });
    if (!response.ok) return null;
    const body = (await response.json()) as { signedIn?: boolean; identity?: string; roles?: string[]; csrfToken?: string };
    if (!body.signedIn || typeof body.identity !== 'string') return null;
    return { identity: body.identity, roles: Array.isArray(body.roles) ? body.roles : [], csrfToken: body.csrfToken };
  } catch {
    return null;
  }
}

/** The providers of the gateway's `auth.oidc`, in its order; none when it has no sign-in or cannot say. */
export async function fetchProviders(): Promise<ProviderOption[]> {
  try {
    const response = await fetch('/auth/providers', { headers: { Accept: 'application/json' }, cache: 'no-store' });
    if (!response.ok) return [];
    const body = (await response.json()) as { providers?: { name?: unknown; displayName?: unknown }[] };
    return (body.providers ?? [])
      .filter((p): p is { name: string; displayName: string } => typeof p.name === 'string' && typeof p.displayName === 'string')
      .map(({ name, displayName }) => ({ name, displayName }));
  } catch {
    return [];
  }
}

/**
 * Ends the dashboard session at the gateway; resolves with the provider's sign-out URL to go to next, if it has one.
 * Rejects when the gateway refused or cannot be reached (the caller still forgets the session locally).
 */
export async function postLogout(csrfToken: string): Promise<string | undefined> {
  const response = await fetch('/auth/logout', { method: 'POST', headers: { 'X-Outpost-CSRF': csrfToken }, cache: 'no-store' });
  if (!response.ok) throw new Error(`sign-out refused (HTTP ${response.status})`);
  const body = (await response.json()) as { endSessionUrl?: unknown };
  return typeof body.endSessionUrl === 'string' ? body.endSessionUrl : undefined;
}

/** The link that starts a sign-in with `provider` and comes back to `next` (a path of this page). */
export function signInHref(provider: string, next: string): string {
  return `/auth/oidc/${encodeURIComponent(provider)}/login?next=${encodeURIComponent(next)}`;
}

/**
 * The code of a failed sign-in the gateway sent the browser back with (`/?sign_in_error=<code>`), removed from the
 * address bar so a reload or a shared link does not show it again; '' when there is none.
 */
export function takeSignInError(location: Location, history: History): string {
  const params = new URLSearchParams(location.search);
  const code = params.get('sign_in_error');
  if (code === null) return '';
  params.delete('sign_in_error');
  const search = params.toString();
  history.replaceState(history.state, '', `${location.pathname}${search ? `?${search}` : ''}${location.hash}`);
  return code;
}

/** The sentence for a failed sign-in's code: fixed text, never words from the URL. */
export function signInErrorText(code: string): string {
  switch (code) {
    case 'access_denied':
      return 'The identity provider did not sign you in (access denied).';
    case 'login_expired':
      return 'The sign-in took too long, or was started in another tab. Start it again.';
    case 'state_mismatch':
      return 'The answer from the identity provider does not belong to the sign-in this browser started. Start it again.';
    case 'token_refused':
      return "The gateway refused the identity provider's token. Ask an administrator to check the gateway's log.";
    case 'unavailable':
      return 'The identity provider cannot be reached. Try again later.';
    default:
      return "The identity provider's answer could not be used. Start the sign-in again, or ask an administrator to check the gateway's log.";
  }
}
