/**
 * A real OpenID Provider on loopback for the sign-in tests: `oidc-provider` (panva's certified implementation) with
 * its development login and consent pages (any password; the login name picks the user), two users in different
 * groups, a confidential dashboard client and a public CLI client, PKCE, refresh tokens (and their revocation), the
 * device grant, and signing keys that can be rotated. The listening socket is bound first (port 0), so a gateway can be configured with the
 * issuer before the provider knows the gateway's redirect URIs ({@link TestOidcProvider.configure}).
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { importJWK, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';

/** The people of the test provider: login name → groups. */
export const OIDC_USERS: Readonly<Record<string, readonly string[]>> = {
  alice: ['platform-admins', 'everyone'],
  bob: ['developers', 'everyone'],
};

export const DASHBOARD_CLIENT_ID = 'outpost-dashboard';
export const DASHBOARD_CLIENT_SECRET = 'dashboard-secret-of-the-test-provider';
export const CLI_CLIENT_ID = 'outpost-cli';

/** What the provider is told once the gateway's URLs are known. */
interface OidcProviderSetup {
  /** The dashboard client's redirect URIs (`<gateway>/auth/oidc/<name>/callback`). */
  dashboardRedirectUris: string[];
  /** Where the provider may send people after sign-out (the gateway's page). */
  postLogoutRedirectUris?: string[];
  /** ID and access token lifetime in seconds (default 3600). */
  tokenSeconds?: number;
  /** How long a device flow's user code stays valid, in seconds (default 600). */
  deviceCodeSeconds?: number;
}

/** A running provider. */
export interface TestOidcProvider {
  /** `http://127.0.0.1:<port>` — also the `iss` of its tokens. */
  readonly issuer: string;
  /** (Re)builds the provider with these clients; requests before the first call answer 503. */
  configure(setup: OidcProviderSetup): void;
  /** A new signing key signs from now on; the previous one is still published (the first half of a rotation). */
  rotateKeys(): void;
  /** Only the newest key is published: tokens signed with older ones no longer verify (the rotation is complete). */
  dropOldKeys(): void;
  /**
   * Signs a token as this provider would, with the newest key or an older one (`keyIndex` 1 = the previous), for the
   * refusal tests (another audience, expired, an old key). `claims` override the defaults (iss, aud dashboard, sub,
   * iat, exp in an hour).
   */
  mint(claims: Record<string, unknown>, keyIndex?: number): Promise<string>;
  /**
   * A refresh token of the CLI client for `login`, as a finished sign-in would have left (scopes openid, email,
   * groups, offline_access), made without a browser: for tests of what the CLI does with a cached sign-in.
   */
  issueRefreshToken(login: string): Promise<string>;
  /** How many requests reached `path` (e.g. `/jwks`: how often a gateway fetched the keys). */
  requests(path: string): number;
  /**
   * Changes a person's groups from now on (tokens issued later, refreshed ones included, carry them); the other
   * people of {@link OIDC_USERS} keep theirs.
   */
  setGroups(login: string, groups: readonly string[]): void;
  /**
   * While on, the token endpoint answers every request `400 invalid_grant` (a grant the provider revoked: the person
   * was disabled, or signed out everywhere).
   */
  refuseTokens(on: boolean): void;
  close(): Promise<void>;
}

function newKey(): JWK & { kid: string } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' }) as JWK;
  return { ...jwk, kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

/** Starts the provider's socket on 127.0.0.1:0; call {@link TestOidcProvider.configure} before signing in. */
export async function startTestOidcProvider(): Promise<TestOidcProvider> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const counts = new Map<string, number>();
  let refusing = false;
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    if (refusing && req.method === 'POST' && path === '/token') {
      req.resume();
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"error":"invalid_grant","error_description":"grant revoked (test)"}');
      return;
    }
    if (!handler) {
      res.writeHead(503).end('the test provider is not configured yet');
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let keys = [newKey()];
  let setup: OidcProviderSetup | undefined;
  let current: Provider | undefined;
  const groupsOf = new Map<string, readonly string[]>(Object.entries(OIDC_USERS));

  const build = () => {
    if (!setup) return;
    const s = setup;
    const tokenSeconds = s.tokenSeconds ?? 3600;
    const provider = new Provider(issuer, {
      jwks: { keys: keys.map((k) => ({ ...k })) },
      clients: [
        {
          client_id: DASHBOARD_CLIENT_ID,
          client_secret: DASHBOARD_CLIENT_SECRET,
          token_endpoint_auth_method: 'client_secret_basic',
          redirect_uris: s.dashboardRedirectUris,
          post_logout_redirect_uris: s.postLogoutRedirectUris ?? [],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
        {
          client_id: CLI_CLIENT_ID,
          token_endpoint_auth_method: 'none',
          application_type: 'native',
          redirect_uris: ['http://127.0.0.1/callback'],
          grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
      ],
      features: {
        deviceFlow: { enabled: true },
        devInteractions: { enabled: true },
        rpInitiatedLogout: { enabled: true },
        // A client may revoke its own tokens (the default policy, written out so the provider does not log a notice).
        revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      },
      async findAccount(_ctx, id) {
        return { accountId: id, claims: async () => ({ sub: id, email: `${id}@example.com`, groups: [...(groupsOf.get(id) ?? [])] }) };
      },
      claims: { openid: ['sub'], email: ['email'], groups: ['groups'], profile: [] },
      scopes: ['openid', 'offline_access', 'email', 'profile', 'groups'],
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      // Refresh tokens whenever the client may use them (the default wants offline_access with prompt=consent).
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      ttl: {
        IdToken: tokenSeconds,
        AccessToken: tokenSeconds,
        RefreshToken: 86_400,
        DeviceCode: s.deviceCodeSeconds ?? 600,
        Interaction: 600,
        Session: 86_400,
        Grant: 86_400,
        AuthorizationCode: 60,
      },
    });
    provider.proxy = false;
    current = provider;
    // The native CLI client's loopback redirect may use any port (RFC 8252 section 7.3); the provider checks the
    // registered URI without its port for native clients on 127.0.0.1.
    handler = provider.callback();
  };

  return {
    issuer,
    configure(next) {
      setup = next;
      build();
    },
    rotateKeys() {
      keys = [newKey(), ...keys];
      build();
    },
    dropOldKeys() {
      keys = keys.slice(0, 1);
      build();
    },
    async mint(claims, keyIndex = 0) {
      const jwk = keys[keyIndex];
      if (!jwk) throw new Error(`no signing key ${keyIndex}: ${keys.length} key(s) so far`);
      const now = Math.floor(Date.now() / 1000);
      const payload = {
        iss: issuer,
        aud: DASHBOARD_CLIENT_ID,
        sub: 'alice',
        groups: OIDC_USERS.alice,
        iat: now,
        exp: now + 3600,
        ...claims,
      };
      const key = await importJWK(jwk, 'RS256');
      return new SignJWT(payload as Record<string, unknown>).setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'JWT' }).sign(key);
    },
    async issueRefreshToken(login) {
      if (!current) throw new Error('configure the test provider first');
      const client = await current.Client.find(CLI_CLIENT_ID);
      if (!client) throw new Error(`no client ${CLI_CLIENT_ID}`);
      const scope = 'openid email groups offline_access';
      const grant = new current.Grant({ accountId: login, clientId: CLI_CLIENT_ID });
      grant.addOIDCScope(scope);
      const grantId = await grant.save();
      const token = new current.RefreshToken({
        client,
        accountId: login,
        grantId,
        scope,
        gty: 'device_code',
        authTime: Math.floor(Date.now() / 1000),
      });
      return token.save();
    },
    requests: (path) => counts.get(path) ?? 0,
    setGroups(login, groups) {
      groupsOf.set(login, [...groups]);
    },
    refuseTokens(on) {
      refusing = on;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The gateway's `auth.oidc` entry for this provider as the sign-in tests of the CLI configure it: provider `corp`
 * ("Corp SSO"), the dashboard and CLI clients, groups prefixed `corp:`, the scopes that bring the groups and a
 * refresh token.
 */
export function corpProviderConfig(issuer: string) {
  return {
    name: 'corp',
    displayName: 'Corp SSO',
    issuer,
    clientId: DASHBOARD_CLIENT_ID,
    cliClientId: CLI_CLIENT_ID,
    groupsPrefix: 'corp:',
    scopes: ['openid', 'email', 'offline_access', 'groups'],
  };
}
