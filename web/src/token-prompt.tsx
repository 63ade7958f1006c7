import { useState } from 'preact/hooks';
import { useServices } from './services.js';

/**
 * The access-token form of the sign-in page: submitting stores the token (sessionStorage `outpost.token`) and bumps
 * the auth version, which remounts the page and reopens WatchFleet with it; a token the server rejects brings the
 * sign-in page back with the server's message.
 */
export function TokenPrompt() {
  const { auth } = useServices();
  const [token, setToken] = useState('');
  const [hint, setHint] = useState('');

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
  );
}
