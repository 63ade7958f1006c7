import { useEffect, useRef, useState } from 'preact/hooks';
import { useAuthState, useServices } from './services.js';

/**
 * The sign-in form, shown instead of the page when a call failed with Unauthenticated. Submitting stores the token
 * (sessionStorage `outpost.token`) and bumps the auth version, which remounts the page and reopens WatchFleet with
 * it; a token the server rejects brings this form back with the server's message.
 */
export function TokenPrompt() {
  const { auth } = useServices();
  const { message } = useAuthState();
  const [token, setToken] = useState('');
  const [hint, setHint] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    document.title = 'Sign in · Outpost';
    heading.current?.focus();
  }, []);

  const submit = (event: Event): void => {
    event.preventDefault();
    const value = token.trim();
    if (!value) {
      setHint('Enter the access token issued for the gateway.');
      return;
    }
    auth.signIn(value);
  };

  return (
    <section class="sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title" tabIndex={-1} ref={heading}>
        Sign in
      </h1>
      <p>This gateway requires an access token (a bearer token for the Outpost API).</p>
      {message && (
        <p class="error" role="alert">
          The gateway refused the request: {message}
        </p>
      )}
      <form aria-label="Sign in" onSubmit={submit} class="stack">
        <div class="field">
          <label for="access-token">Access token</label>
          <input
            id="access-token"
            type="password"
            autoComplete="off"
            spellcheck={false}
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
            aria-describedby={hint ? 'access-token-hint' : undefined}
          />
          {hint && (
            <p id="access-token-hint" class="error">
              {hint}
            </p>
          )}
        </div>
        <div>
          <button type="submit" class="primary">
            Sign in
          </button>
        </div>
      </form>
    </section>
  );
}
