/**
 * A provider's signing keys as the gateway trusts them: the JWKS is fetched on first use and kept for `cacheMs`; a
 * token whose key id the kept set lacks fetches it again — once: concurrent tokens share one fetch, and no second
 * fetch starts within `cooldownMs` of the last, so tokens with made-up key ids cannot make the gateway hammer the
 * provider. A key the provider stopped publishing is refused once the set is fetched again. `jose` selects and checks
 * the key (`createLocalJWKSet`); only the fetching policy is here, with a clock the tests drive.
 */
import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';

/** How the keys are fetched and kept. */
export interface SigningKeyOptions {
  jwksUri: string;
  cacheMs: number;
  cooldownMs: number;
  /** Epoch ms; `Date.now` unless a test drives it. */
  now?: () => number;
  /** Reads the JWKS document (plain `fetch` with a 10 s timeout unless a test replaces it). */
  fetchJwks?: (uri: string) => Promise<JSONWebKeySet>;
}

/** The key resolver `jwtVerify` takes. */
export function createSigningKeys(options: SigningKeyOptions): JWTVerifyGetKey {
  const now = options.now ?? Date.now;
  const fetchJwks = options.fetchJwks ?? defaultFetch;
  let keys: { set: ReturnType<typeof createLocalJWKSet>; at: number } | undefined;
  let lastFetchAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | undefined;

  const reload = () => {
    inFlight ??= (async () => {
      lastFetchAt = now();
      try {
        keys = { set: createLocalJWKSet(await fetchJwks(options.jwksUri)), at: now() };
      } finally {
        inFlight = undefined;
      }
    })();
    return inFlight;
  };

  return async (header, token) => {
    if (!keys || now() - keys.at >= options.cacheMs) await reload();
    try {
      return await keys!.set(header, token);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey)) throw err;
      if (inFlight) await inFlight;
      else if (now() - lastFetchAt >= options.cooldownMs) await reload();
      else throw err;
      return keys!.set(header, token);
    }
  };
}

async function defaultFetch(uri: string): Promise<JSONWebKeySet> {
  const response = await fetch(uri, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`the JWKS at ${uri} answered HTTP ${response.status}`);
  const body = (await response.json()) as JSONWebKeySet;
  if (!Array.isArray(body?.keys)) throw new Error(`the JWKS at ${uri} has no "keys" array`);
  return body;
}
