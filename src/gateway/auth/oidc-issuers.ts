/**
 * The OpenID Connect providers of `auth.oidc` as the gateway checks their tokens: each provider's discovery document
 * (`/.well-known/openid-configuration`) is read on first use and kept, retried after a failure at most every
 * {@link DISCOVERY_RETRY_MS}; its JWKS is fetched by `jose` and cached (`jwksCacheSeconds`), and a token signed with a
 * key id the cache lacks fetches it again at most once per `jwksCooldownSeconds` (key rotation, rate-limited). A token
 * is accepted when its signature, `iss`, `aud` (the client ids and `audiences`), `exp` and `nbf` check out; it names
 * the identity `oidc:<provider>:<username>` with the provider's groups (prefixed). See docs/sign-in.md.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import * as client from 'openid-client';
import type { Logger } from '../../shared/logger.js';
import type { OidcConfig, OidcProviderConfig } from '../config/oidc-schema.js';
import { createSigningKeys } from './oidc-signing-keys.js';

/** How long after a failed discovery the next token or sign-in tries again (ms). */
const DISCOVERY_RETRY_MS = 10_000;

/** A token a provider vouched for. */
export interface OidcIdentity {
  provider: string;
  /** `<provider>:<username>`: the principal's subject (its identity is `oidc:` + this). */
  subject: string;
  /** The groups claim, each with the provider's `groupsPrefix`. */
  groups: string[];
  /** `exp` in epoch milliseconds. */
  expiresAt: number;
}

/** One configured provider. */
export interface OidcIssuer {
  readonly config: OidcProviderConfig;
  /** The provider's metadata (discovery); UNAVAILABLE naming the issuer while it cannot be read. */
  serverMetadata(): Promise<client.ServerMetadata>;
  /** Checks a token of this issuer; UNAUTHENTICATED saying why not. */
  verify(token: string): Promise<OidcIdentity>;
  /** The identity a verified payload names (also used for the ID token a sign-in returns). */
  identityOf(payload: JWTPayload): OidcIdentity;
}

/** The configured providers. */
export interface OidcIssuers {
  /** The provider whose issuer is exactly `iss`. */
  byIssuer(iss: string): OidcIssuer | undefined;
  byName(name: string): OidcIssuer | undefined;
  all(): OidcIssuer[];
}

/** Options of discovery: plain http is allowed to loopback issuers only (the schema refuses any other). */
export function discoveryOptions(issuer: string): client.DiscoveryRequestOptions {
  return issuer.startsWith('http:') ? { execute: [client.allowInsecureRequests] } : {};
}

/**
 * Builds the providers of `auth.oidc` (nothing is fetched until a token or a sign-in needs it). `now` is the clock of
 * the signing-key cache (tests drive it).
 */
export function createOidcIssuers(config: OidcConfig | undefined, logger: Logger, now: () => number = Date.now): OidcIssuers {
  const issuers = (config?.providers ?? []).map((p) => createIssuer(p, logger, now));
  return {
    byIssuer: (iss) => issuers.find((i) => i.config.issuer === iss),
    byName: (name) => issuers.find((i) => i.config.name === name),
    all: () => issuers,
  };
}

function createIssuer(config: OidcProviderConfig, logger: Logger, now: () => number): OidcIssuer {
  let discovered: Promise<{ metadata: client.ServerMetadata; jwks: JWTVerifyGetKey }> | undefined;
  let failedAt = 0;
  const audiences = [...new Set([config.clientId, ...(config.cliClientId ? [config.cliClientId] : []), ...config.audiences])];

  const discover = () => {
    if (discovered) return discovered;
    if (failedAt !== 0 && Date.now() - failedAt < DISCOVERY_RETRY_MS) {
      return Promise.reject(unavailable(config, 'its discovery failed moments ago; retrying shortly'));
    }
    discovered = (async () => {
      const found = await client.discovery(new URL(config.issuer), config.clientId, undefined, undefined, discoveryOptions(config.issuer));
      const metadata = found.serverMetadata();
      if (!metadata.jwks_uri) throw new Error('the discovery document has no jwks_uri');
      const jwks = createSigningKeys({
        jwksUri: metadata.jwks_uri,
        cacheMs: config.jwksCacheSeconds * 1000,
        cooldownMs: config.jwksCooldownSeconds * 1000,
        now,
      });
      logger.info({ provider: config.name, issuer: config.issuer }, 'OIDC provider discovered');
      return { metadata, jwks };
    })();
    discovered.catch((err: Error) => {
      discovered = undefined;
      failedAt = Date.now();
      logger.warn({ provider: config.name, issuer: config.issuer, err: err.message }, 'OIDC provider discovery failed');
    });
    return discovered.catch((err: Error) => {
      throw unavailable(config, err.message);
    });
  };

  const identityOf = (payload: JWTPayload): OidcIdentity => {
    const username = payload[config.usernameClaim];
    if (typeof username !== 'string' || username === '') {
      throw new ConnectError(
        `token of OIDC provider ${config.name} has no string "${config.usernameClaim}" claim to name the person (usernameClaim)`,
        Code.Unauthenticated,
      );
    }
    return {
      provider: config.name,
      subject: `${config.name}:${username}`,
      groups: claimedGroups(payload[config.groupsClaim]).map((g) => `${config.groupsPrefix}${g}`),
      expiresAt: (payload.exp as number) * 1000,
    };
  };

  return {
    config,
    serverMetadata: async () => (await discover()).metadata,
    identityOf,
    async verify(token) {
      const { jwks } = await discover();
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, jwks, {
          issuer: config.issuer,
          audience: audiences,
          clockTolerance: config.clockToleranceSeconds,
          requiredClaims: ['exp'],
        }));
      } catch (err) {
        if (!(err instanceof joseErrors.JOSEError)) throw unavailable(config, `its signing keys cannot be read: ${(err as Error).message}`);
        throw new ConnectError(explain(err, config, audiences), Code.Unauthenticated);
      }
      return identityOf(payload);
    },
  };
}

function unavailable(config: OidcProviderConfig, why: string): ConnectError {
  return new ConnectError(`OIDC provider ${config.name} (${config.issuer}) cannot be reached: ${why}`, Code.Unavailable);
}

/** A groups claim: an array of strings, or one string; anything else names no group. */
export function claimedGroups(claim: unknown): string[] {
  if (typeof claim === 'string') return claim === '' ? [] : [claim];
  if (Array.isArray(claim)) return claim.filter((g): g is string => typeof g === 'string' && g !== '');
  return [];
}

function explain(err: unknown, config: OidcProviderConfig, audiences: string[]): string {
  const what = `token of OIDC provider ${config.name}`;
  if (err instanceof joseErrors.JWTExpired) return `${what} expired`;
  if (err instanceof joseErrors.JWKSNoMatchingKey) {
    return `${what} is signed with a key the provider no longer publishes (rotated out) or never did`;
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return `${what} signature invalid`;
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return `${what} is for another audience: accepted are ${audiences.join(', ')}`;
    if (err.claim === 'nbf') return `${what} not yet valid (nbf)`;
    if (err.claim === 'iss') return `${what} issuer (iss) does not match ${config.issuer}`;
    if (err.claim === 'exp') return `${what} has no valid exp claim`;
    return `${what} claim ${err.claim} invalid: ${err.reason}`;
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed || err instanceof joseErrors.JOSENotSupported) return `${what} algorithm not supported`;
  return `${what} invalid: ${(err as Error).message}`;
}
