import { Code, ConnectError } from '@connectrpc/connect';

/** sessionStorage key holding the bearer token the dashboard sends (cleared when the tab closes). */
const TOKEN_KEY = 'outpost.token';

/** Who the gateway says is signed in (`GET /auth/session`): the dashboard's session, or the stored token's holder. */
export interface SignedIn {
  /** `oidc:corp:alice`, `token:ci`, … */
  identity: string;
  /** The effective roles the gateway's rules give them. */
  roles: string[];
  /** Present for the dashboard session (the cookie): every call sends it as `X-Outpost-CSRF`. */
  csrfToken?: string;
}

/** What the UI needs to know about authentication at one moment. */
export interface AuthState {
  /**
   * Bumped on every sign-in and sign-out. Views and streams restart when it changes, and an Unauthenticated error
   * from a call started under an older version is ignored (it used a token that is gone).
   */
  version: number;
  /** True while the sign-in form must be shown instead of the page. */
  prompt: boolean;
  /** The server's message for the last rejected token (empty when no token was sent: nothing failed yet). */
  message: string;
  /** True when a token is stored (the header then offers "Sign out"). */
  hasToken: boolean;
  /** Who is signed in, as the gateway last said; null before it said, or when nobody is. */
  who: SignedIn | null;
  /** Why the last sign-in with a provider failed (`/?sign_in_error=<code>`), '' when it did not. */
  signInError: string;
  /**
   * Bumped when the gateway refused the session's CSRF token (the session was replaced, say by a sign-in in another
   * tab): the page then asks again who is signed in.
   */
  recheck: number;
}

/** The dashboard's token and sign-in state, shared by the transport, the views and the header. */
export interface AuthStore {
  /** The stored token, or null in dev mode / before signing in. Read on every request. */
  token(): string | null;
  /** The dashboard session's CSRF token, or null without a session. Read on every request. */
  csrf(): string | null;
  /**
   * Records who the gateway says is signed in. Everything restarts when the session's CSRF token changed (calls made
   * with the old one were refused); otherwise the calls in flight are theirs already.
   */
  identify(who: SignedIn | null): void;
  /** Records why a sign-in with a provider failed (its code), shown on the sign-in page. */
  failSignIn(code: string): void;
  state(): AuthState;
  /** Calls `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  /** Stores `token` and restarts everything with it. */
  signIn(token: string): void;
  /**
   * Forgets the token and the session and restarts everything without them (the prompt comes back if the server
   * wants one). The caller has already ended the dashboard session at the gateway (`POST /auth/logout`).
   */
  signOut(): void;
  /**
   * Reports an RPC failure. When it is Unauthenticated and the call was started under the current `version`, the
   * sign-in form is shown (with the server's message) and true is returned; anything else returns false and the
   * caller shows the error itself (PermissionDenied included: a valid token that lacks a role is not a sign-in; one
   * refusing the session's CSRF token also asks for a recheck of who is signed in).
   */
  report(error: unknown, version: number): boolean;
}

/**
 * Creates the auth store over `storage` (sessionStorage in the page). Storage failures (private mode, disabled
 * storage) fall back to memory, so signing in still works for the life of the page.
 */
export function createAuthStore(storage: Storage | null): AuthStore {
  let memoryToken: string | null = null;
  const read = (): string | null => {
    try {
      return storage ? storage.getItem(TOKEN_KEY) : memoryToken;
    } catch {
      return memoryToken;
    }
  };
  const write = (token: string | null): void => {
    memoryToken = token;
    try {
      if (!storage) return;
      if (token === null) storage.removeItem(TOKEN_KEY);
      else storage.setItem(TOKEN_KEY, token);
    } catch {
      // memoryToken keeps it.
    }
  };

  let state: AuthState = { version: 0, prompt: false, message: '', hasToken: read() !== null, who: null, signInError: '', recheck: 0 };
  const listeners = new Set<() => void>();
  const update = (next: Partial<AuthState>): void => {
    state = { ...state, ...next };
    for (const listener of [...listeners]) listener();
  };

  return {
    token: read,
    csrf: () => state.who?.csrfToken ?? null,
    identify(who) {
      const changed = (state.who?.csrfToken ?? null) !== (who?.csrfToken ?? null);
      update(changed ? { who, version: state.version + 1 } : { who });
    },
    failSignIn(code) {
      update({ signInError: code });
    },
    state: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    signIn(token) {
      write(token);
      update({ version: state.version + 1, prompt: false, hasToken: true, signInError: '' });
    },
    signOut() {
      write(null);
      update({ version: state.version + 1, prompt: false, message: '', hasToken: false, who: null });
    },
    report(error, version) {
      if (!(error instanceof ConnectError)) return false;
      if (error.code === Code.PermissionDenied && state.who?.csrfToken !== undefined && error.rawMessage.includes('X-Outpost-CSRF')) {
        if (version === state.version) update({ recheck: state.recheck + 1 });
        return false;
      }
      if (error.code !== Code.Unauthenticated) return false;
      if (version !== state.version) return true;
      if (state.prompt) return true;
      // A token the server rejects is useless: forget it so the form starts empty and "Sign out" disappears; a session
      // the server ended is over too. The server's message is shown only when a token or a session was used: a first
      // visit without either is no failed sign-in.
      const attempted = read() !== null || state.who?.csrfToken !== undefined;
      write(null);
      update({ prompt: true, message: attempted ? error.rawMessage : '', hasToken: false, who: null });
      return true;
    },
  };
}
