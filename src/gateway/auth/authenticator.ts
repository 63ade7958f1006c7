/**
 * Turns {@link RequestCredentials} into a {@link Principal}, or refuses with UNAUTHENTICATED and a message that says
 * why. One authenticator serves every surface (agent streams, Connect/gRPC calls, REST routes).
 *
 * Decision order (every presented credential is verified, in insecure mode too):
 * 1. Client certificate (TLS with clientAuth OPTIONAL or REQUIRE): when presented it must chain to `tls.caFile` and
 *    match a subject filter, or the request is refused. Under REQUIRE a request without one is refused — REQUIRE is
 *    a transport rule that neither a token, `readAccess: open` nor insecure mode relaxes.
 * 2. A non-Bearer `Authorization` header is refused (naming the scheme).
 * 3. Bearer token: a static token (`auth.tokens`), then by its issuer a replica token (`auth.replicaSecretFile`), a
 *    token of an `auth.oidc` provider (oidc-issuers.ts: identity `oidc:<provider>:<username>`) or an `auth.jwt`
 *    token. Any other token is refused.
 * 4. Certificate AND token presented: both must be valid, and the token names the principal — the certificate
 *    admits the connection, the token says who is calling over it (a replica or an operator behind a mTLS proxy).
 * 5. No token, and the surface read the browser's cookies (browser-session.ts): the dashboard's session cookie, when
 *    the sign-in module set a {@link SessionResolver} and the request carries one (CSRF rules checked there).
 * 6. Nothing presented: insecure mode gets {@link insecurePrincipal}; a caller allowing anonymous access (read routes
 *    under `readAccess: open`) gets an anonymous principal with the roles it names; otherwise UNAUTHENTICATED.
 *
 * Revocation: token principals carry a {@link Principal.revocation} (token-revocation.ts): token files are polled
 * (every {@link AuthenticatorDeps.revocationCheckMs}) while a long stream holds one, and streams whose token is no
 * longer valid end UNAUTHENTICATED.
 *
 * Roles come from `authorization.rules` ({@link principalFromRules}); replica tokens get the roles `replica` and
 * `read` (replicas list each other and read operations), whatever the rules say.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { Logger } from '../../shared/logger.js';
import { createSilentLogger } from '../../shared/logger.js';
import type { GatewayConfig, Role } from '../config/schema.js';
import { createClientCertificatePolicy } from './client-certificate.js';
import type { SessionResolver } from './browser-session.js';
import type { RequestCredentials } from './credentials.js';
import { createJwtVerifier, looksLikeJwt, unverifiedIssuer, type JwtVerifier } from './jwt-tokens.js';
import { claimedGroups, createOidcIssuers, type OidcIssuers } from './oidc-issuers.js';
import { insecurePrincipal, principalFromRules, type Principal } from './principal.js';
import { createReplicaTokenVerifier, REPLICA_ISSUER } from './replica-token.js';
import { createStaticTokens, tokenDigest } from './static-tokens.js';
import { createTokenRevocations } from './token-revocation.js';
import { principalFromDescription, type PrincipalDescription } from './vouched-principal.js';

/** Options of one authentication. */
interface AuthenticateOptions {
  /** Admit a request without credentials as `anonymous` with these roles (read routes under `readAccess: open`). */
  anonymousRoles?: readonly Role[];
}

/** Authenticates requests. */
export interface Authenticator {
  /** Resolves the principal; rejects with a ConnectError (UNAUTHENTICATED) naming the reason. */
  authenticate(credentials: RequestCredentials, options?: AuthenticateOptions): Promise<Principal>;
  /**
   * The principal another replica authenticated and vouches for (a forwarded kubectl request), with the roles THIS
   * replica's rules give it (vouched-principal.ts). Call it only for a request authenticated with the `replica` role.
   */
  vouched(description: PrincipalDescription): Principal;
  /** `auth.readAccess`: whether read routes admit requests without credentials. */
  readonly readAccess: GatewayConfig['auth']['readAccess'];
  /**
   * Accepts the dashboard's session cookie from now on, resolved by `resolver` (set once by the sign-in module while
   * the gateway is built, before it serves). Without it cookies are never looked at.
   */
  useSessions(resolver: SessionResolver): void;
  /** Stops file watchers (token files, keys). */
  close(): void;
}

/** What the authenticator reads from the configuration. */
export type AuthenticatorConfig = Pick<GatewayConfig, 'insecure' | 'auth' | 'authorization' | 'tls'>;

/** Dependencies of {@link createAuthenticator}. */
export interface AuthenticatorDeps {
  logger?: Logger;
  /** Where `auth.tokens[].tokenEnv` are read; defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** How often token files are checked while streams hold token principals (ms; default 2000). */
  revocationCheckMs?: number;
  /** The `auth.oidc` providers (shared with the dashboard's sign-in); built from the config when absent. */
  oidc?: OidcIssuers;
}

/**
 * Creates the authenticator. Reads every token file, key and secret now and throws an error naming the config key
 * when one is missing or invalid, so a misconfigured gateway does not start.
 */
export function createAuthenticator(config: AuthenticatorConfig, deps: AuthenticatorDeps = {}): Authenticator {
  const logger = deps.logger ?? createSilentLogger();
  const rules = config.authorization.rules;
  const certificates = createClientCertificatePolicy(config.tls);
  const tokens = createStaticTokens(config.auth.tokens, deps.env ?? process.env, logger);
  const jwt: JwtVerifier | undefined = config.auth.jwt ? createJwtVerifier(config.auth.jwt, logger) : undefined;
  const replica: JwtVerifier | undefined = config.auth.replicaSecretFile
    ? createReplicaTokenVerifier(config.auth.replicaSecretFile, logger)
    : undefined;

  const tokenGroups = new Map<string, string[]>();
  for (const t of config.auth.tokens) tokenGroups.set(t.subject, [...(tokenGroups.get(t.subject) ?? []), ...t.groups]);
  const revocations = createTokenRevocations(tokens, logger, deps.revocationCheckMs ?? 2000);
  const oidc = deps.oidc ?? createOidcIssuers(config.auth.oidc, logger);

  const fromToken = async (token: string): Promise<Principal> => {
    const subject = await tokens.match(token);
    if (subject !== undefined) {
      const presented = tokenDigest(token);
      const principal = principalFromRules(subject, 'token', rules, undefined, {}, tokenGroups.get(subject));
      return {
        ...principal,
        revocation: revocations.revocationOf(async () => (await tokens.matchDigest(presented)) === subject, 'static token'),
      };
    }
    if (looksLikeJwt(token)) {
      const issuer = unverifiedIssuer(token);
      if (issuer === REPLICA_ISSUER && replica) {
        const v = await replica.verify(token);
        return {
          subject: `replica:${v.subject}`,
          method: 'replica',
          roles: new Set<Role>(['replica', 'read']),
          accounts: {},
          expiresAt: v.expiresAt,
        };
      }
      const provider = issuer === undefined ? undefined : oidc.byIssuer(issuer);
      if (provider) {
        const v = await provider.verify(token);
        return principalFromRules(v.subject, 'oidc', rules, v.expiresAt, {}, v.groups);
      }
      if (jwt) {
        const v = await jwt.verify(token);
        return principalFromRules(v.subject, 'jwt', rules, v.expiresAt, {}, claimedGroups(v.payload[config.auth.jwt!.groupsClaim]));
      }
      if (issuer === REPLICA_ISSUER) throw unauthenticated('replica token presented but this gateway has no auth.replicaSecretFile');
      if (oidc.all().length > 0) {
        throw unauthenticated(
          `bearer token not recognized: its issuer ${JSON.stringify(issuer ?? '')} is none of the OIDC providers of auth.oidc (${oidc
            .all()
            .map((p) => p.config.issuer)
            .join(', ')})`,
        );
      }
      throw unauthenticated('bearer token not recognized: it is a JWT but no auth.jwt issuer is configured');
    }
    throw unauthenticated('bearer token not recognized');
  };

  let sessions: SessionResolver | undefined;
  return {
    readAccess: config.auth.readAccess,
    useSessions(resolver) {
      sessions = resolver;
    },
    vouched: (description) => principalFromDescription(description, rules, config.insecure),
    async authenticate(credentials, options = {}) {
      let certificateSubject: string | undefined;
      if (certificates.clientAuth !== 'NONE') {
        if (credentials.certificate) certificateSubject = certificates.verify(credentials.certificate);
        else if (certificates.clientAuth === 'REQUIRE') {
          throw unauthenticated(
            credentials.secure
              ? 'client certificate required (tls.clientAuth REQUIRE) but none was presented'
              : 'client certificate required: connect with TLS',
          );
        }
      }
      if (credentials.otherAuthorization !== undefined) {
        throw unauthenticated(
          `unsupported Authorization scheme ${JSON.stringify(credentials.otherAuthorization)}: send "Authorization: Bearer <token>"`,
        );
      }
      if (credentials.bearer !== undefined) return fromToken(credentials.bearer);
      if (sessions && credentials.browser) {
        const principal = await sessions.authenticate(credentials.browser);
        if (principal) return principal;
      }
      if (certificateSubject !== undefined) {
        // Stryker disable next-line OptionalChaining: certificateSubject is set only when a certificate was presented and verified
        return principalFromRules(certificateSubject, 'certificate', rules, undefined, credentials.certificate?.attributes);
      }
      if (config.insecure) return insecurePrincipal();
      if (options.anonymousRoles)
        return { subject: 'anonymous', method: 'anonymous', roles: new Set(options.anonymousRoles), accounts: {} };
      throw unauthenticated(
        certificates.clientAuth === 'OPTIONAL'
          ? 'authentication required: present a client certificate signed by the configured CA or a bearer token'
          : 'authentication required: present a bearer token (Authorization: Bearer <token>)',
      );
    },
    close() {
      revocations.close();
    },
  };
}

function unauthenticated(message: string): ConnectError {
  return new ConnectError(message, Code.Unauthenticated);
}
