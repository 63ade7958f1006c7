import { Code, ConnectError } from '@connectrpc/connect';

/** sessionStorage key holding the bearer token the dashboard sends (cleared when the tab closes). */
const TOKEN_KEY = 'outpost.token';

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
}

/** The dashboard's token and sign-in state, shared by the transport, the views and the header. */
export interface AuthStore {
  /** The stored token, or null in dev mode / before signing in. Read on every request. */
  token(): string | null;
  state(): AuthState;
  /** Calls `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  /** Stores `token` and restarts everything with it. */
  signIn(token: string): void;
  /** Forgets the token and restarts everything without it (the prompt comes back if the server wants one). */
  signOut(): void;
  /**
   * Reports an RPC failure. When it is Unauthenticated and the call was started under the current `version`, the
   * sign-in form is shown (with the server's message) and true is returned; anything else returns false and the
   * caller shows the error itself (PermissionDenied included: a valid token that lacks a role is not a sign-in).
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

  let state: AuthState = { version: 0, prompt: false, message: '', hasToken: read() !== null };
  const listeners = new Set<() => void>();
  const update = (next: Partial<AuthState>): void => {
    state = { ...state, ...next };
    for (const listener of [...listeners]) listener();
  };

  return {
    token: read,
    state: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    signIn(token) {
      write(token);
      update({ version: state.version + 1, prompt: false, hasToken: true });
    },
    signOut() {
      write(null);
      update({ version: state.version + 1, prompt: false, message: '', hasToken: false });
    },
    report(error, version) {
      if (!(error instanceof ConnectError) || error.code !== Code.Unauthenticated) return false;
      if (version !== state.version) return true;
      if (state.prompt) return true;
      // A token the server rejects is useless: forget it so the form starts empty and "Sign out" disappears. The
      // server's message is shown only when a token was sent: a first visit without one is no failed sign-in.
      const attempted = read() !== null;
      write(null);
      update({ prompt: true, message: attempted ? error.rawMessage : '', hasToken: false });
      return true;
    },
  };
}
