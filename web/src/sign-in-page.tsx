import { useEffect, useRef, useState } from 'preact/hooks';
import { useAuthState } from './services.js';
import { fetchProviders, signInErrorText, signInHref, type ProviderOption } from './session-api.js';
import { TokenPrompt } from './token-prompt.js';

/**
 * The sign-in page, shown instead of the page when a call failed with Unauthenticated: a "Sign in with …" link per
 * identity provider of the gateway (the gateway's own sign-in: it comes back to this very page, signed in by a
 * session cookie), and the access-token form as the other way. It says why the last attempt failed — the provider's
 * refusal, the gateway's message for a rejected token or an ended session — and nothing on a first visit.
 */
export function SignInPage() {
  const { message, signInError } = useAuthState();
  const [providers, setProviders] = useState<ProviderOption[]>([]);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    document.title = 'Sign in · Outpost';
    heading.current?.focus();
    let current = true;
    void fetchProviders().then((found) => current && setProviders(found));
    return () => {
      current = false;
    };
  }, []);

  // Back to where the person was once signed in: the page's path and its hash route.
  const next = `${window.location.pathname}${window.location.hash}`;
  return (
    <section class="sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title" tabIndex={-1} ref={heading}>
        Sign in
      </h1>
      {signInError && (
        <p class="error" role="alert">
          Sign-in failed. {signInErrorText(signInError)}
        </p>
      )}
      {message && (
        <p class="error" role="alert">
          The gateway refused the request: {message}
        </p>
      )}
      {providers.length > 0 && (
        <>
          <ul class="sign-in-providers">
            {providers.map((p) => (
              <li key={p.name}>
                <a class="button primary" href={signInHref(p.name, next)}>
                  Sign in with {p.displayName}
                </a>
              </li>
            ))}
          </ul>
          <h2>Or with an access token</h2>
        </>
      )}
      <p>An access token is a bearer token for the Outpost API, for scripts and for gateways without a sign-in provider.</p>
      <TokenPrompt />
    </section>
  );
}
