/**
 * Which credential authenticates a request, and in what order (src/gateway/auth/authenticator.ts): the client
 * certificate's verdict first (REQUIRE relaxed by nothing), a non-Bearer scheme refused, then the bearer token — a
 * static token, else by its issuer a replica token, an `auth.oidc` provider's token or an `auth.jwt` token, each
 * refusal naming why — over the dashboard's session cookie, then the certificate alone, insecure mode, anonymous
 * readers when the route allows them, else UNAUTHENTICATED. Also the principal each names (roles from the rules of
 * its kind, groups, expiry), the vouched principal of a forwarded request, and a token-file token revoked on a live
 * stream when its file changes. Built from the real parts: static tokens from temporary files, JWT keys made with
 * jose, the replica signer; the OIDC providers and the session resolver are fakes of the interfaces the sign-in
 * feature implements. The token-file poll runs on a fake setTimeout the tests fire, never on the wall clock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { type AuthenticatorConfig, type AuthenticatorDeps, createAuthenticator } from '../../src/gateway/auth/authenticator.js';
import type { BrowserRequest } from '../../src/gateway/auth/browser-session.js';
import { formatSubjectAttributes, type SubjectAttributes } from '../../src/gateway/auth/certificate-subject.js';
import type { PeerCertificateInfo, RequestCredentials } from '../../src/gateway/auth/credentials.js';
import type { OidcIssuer, OidcIssuers } from '../../src/gateway/auth/oidc-issuers.js';
import { insecurePrincipal, principalFromRules, type Principal } from '../../src/gateway/auth/principal.js';
import { createReplicaTokenSigner } from '../../src/gateway/auth/replica-token.js';
import { describePrincipal } from '../../src/gateway/auth/vouched-principal.js';
import { loadGatewayConfig } from '../../src/gateway/config/load.js';
import type { GatewayConfigInput, GatewayTlsConfig } from '../../src/gateway/config/schema.js';
import type { Logger } from '../../src/shared/logger.js';

const dir = mkdtempSync(join(tmpdir(), 'authenticator-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
/** Writes `contents` to a file through a new inode, as a rotation does; returns its path. */
function writeFile(contents: string, path = join(dir, `file-${++counter}`)): string {
  const tmp = join(dir, `.tmp-${++counter}`);
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
  return path;
}

const ALICE = 'alice-token-0123456789abcdef';
const OPS = 'ops-token-0123456789abcdef';
const JWT_ISSUER = 'https://issuer.example';
const OIDC_A = 'https://login.example';
const OIDC_B = 'https://sso.example';
const HOUR = 3600;

/** The rules every test gateway has: one per kind, so a principal's roles show which kind named it. */
const RULES = [
  { kind: 'token', subject: '^alice$', roles: ['read', 'write'], accounts: ['prod-*'] },
  { kind: 'token', subject: '^ops$', groups: ['^oncall$'], roles: ['admin'] },
  { kind: 'jwt', subject: '^ci$', roles: ['write'], accounts: ['ci-*'] },
  { kind: 'jwt', groups: ['^deployers$'], roles: ['read'] },
  { kind: 'oidc', groups: ['^okta:devs$'], roles: ['read'] },
  { kind: 'certificate', attributes: { O: 'agents' }, roles: ['agent'], accounts: ['edge-*'] },
] as const;

let ecKeys: Awaited<ReturnType<typeof generateKeyPair>>;
let publicKeyFile: string;
const replicaSecretFile = writeFile('a-replica-secret-of-at-least-32-bytes');
before(async () => {
  ecKeys = await generateKeyPair('ES256');
  publicKeyFile = writeFile(await exportSPKI(ecKeys.publicKey));
});

/** A gateway configuration with the rules above; `auth` and the rest as given. */
function config(over: GatewayConfigInput = {}, tls?: Partial<GatewayTlsConfig>): AuthenticatorConfig {
  const loaded = loadGatewayConfig({
    env: {},
    overrides: { insecure: false, authorization: { rules: RULES as never }, ...over },
  });
  if (tls === undefined) return loaded;
  return {
    ...loaded,
    tls: { certFile: 'c', keyFile: 'k', caFile: 'ca', clientAuth: 'OPTIONAL', subjectFilters: [], reloadIntervalSeconds: 5, ...tls },
  };
}

const jwtAuth = (over: Record<string, unknown> = {}) => ({
  jwt: { issuer: JWT_ISSUER, audience: 'outpost', publicKeyFile, groupsClaim: 'teams', ...over },
});

/** A JWT signed with the EC key of `auth.jwt` (or `key`), issued now, living an hour. */
async function jwt(claims: JWTPayload, key: CryptoKey | Uint8Array = ecKeys.privateKey as CryptoKey): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: JWT_ISSUER, aud: 'outpost', iat, exp: iat + HOUR, ...claims })
    .setProtectedHeader({ alg: key instanceof Uint8Array ? 'HS256' : 'ES256' })
    .sign(key);
}

/** The authenticator of `cfg`; closed after the test. */
function authenticatorOf(t: TestContext, cfg: AuthenticatorConfig, deps: AuthenticatorDeps = {}) {
  const a = createAuthenticator(cfg, deps);
  t.after(() => a.close());
  return a;
}

/** The UNAUTHENTICATED (or other `code`) message an authentication is refused with. */
async function refusal(promise: Promise<unknown>, code = Code.Unauthenticated): Promise<string> {
  const err = await promise.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ConnectError, String(err));
  assert.equal(err.code, code, err.rawMessage);
  return err.rawMessage;
}

/** The parts of a principal a caller acts on. */
function summary(p: Principal) {
  return { subject: p.subject, method: p.method, roles: [...p.roles].sort(), accounts: p.accounts, groups: p.groups };
}

const bearer = (token: string, over: Partial<RequestCredentials> = {}): RequestCredentials => ({ bearer: token, secure: false, ...over });
const NOTHING: RequestCredentials = { secure: false };

/** A client certificate as the TLS layer collected it. */
function certificate(attributes: SubjectAttributes, over: Partial<PeerCertificateInfo> = {}): PeerCertificateInfo {
  return { attributes, subject: formatSubjectAttributes(attributes), authorized: true, fingerprint: 'cd'.repeat(32), ...over };
}
const AGENT_CERT = certificate({ CN: ['agent-1'], O: ['agents'] });
const FOREIGN_CERT = certificate(
  { CN: ['agent-1'], O: ['agents'] },
  { authorized: false, authorizationError: 'SELF_SIGNED_CERT_IN_CHAIN' },
);

/** A fake `auth.oidc` provider: accepts tokens whose `sub` is not `refused`, as `<name>:<sub>` with prefixed groups. */
function provider(name: string, issuer: string): OidcIssuer {
  return {
    config: { name, issuer } as OidcIssuer['config'],
    serverMetadata: () => Promise.reject(new Error('not used')),
    identityOf: () => assert.fail('not used'),
    async verify(token) {
      const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as JWTPayload;
      if (payload.sub === 'refused') throw new ConnectError(`token of OIDC provider ${name} expired`, Code.Unauthenticated);
      return { provider: name, subject: `${name}:${payload.sub}`, groups: [`${name}:devs`], expiresAt: (payload.exp as number) * 1000 };
    },
  };
}
/** The providers, keeping the issuers they were asked about. */
function oidcOf(...providers: OidcIssuer[]): OidcIssuers & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    byIssuer: (iss) => {
      asked.push(iss);
      return providers.find((p) => p.config.issuer === iss);
    },
    byName: (name) => providers.find((p) => p.config.name === name),
    all: () => providers,
  };
}
const OKTA = provider('okta', OIDC_A);
const DEX = provider('dex', OIDC_B);

/** A logger that keeps what `error` hears. */
function recordingLogger(): { logger: Logger; errors: string[] } {
  const errors: string[] = [];
  return { logger: { error: (_fields: unknown, msg: string) => errors.push(msg) } as unknown as Logger, errors };
}

describe('static tokens', () => {
  test('an inline token names its subject, with the token rules and the groups of every entry of that subject', async (t) => {
    const auth = authenticatorOf(
      t,
      config({
        auth: {
          tokens: [
            { subject: 'alice', token: ALICE, groups: ['devs'] },
            { subject: 'ops', token: OPS, groups: ['oncall'] },
            { subject: 'alice', token: 'alice-second-token-0123456789', groups: ['leads'] },
          ],
        },
      }),
    );
    const alice = await auth.authenticate(bearer(ALICE));
    assert.deepEqual(summary(alice), {
      subject: 'alice',
      method: 'token',
      roles: ['read', 'write'],
      accounts: { write: ['prod-*'] },
      groups: ['devs', 'leads'],
    });
    assert.equal(alice.expiresAt, undefined, 'a static token does not expire');
    assert.ok(alice.revocation, 'a static token can be revoked on a live stream');
    assert.deepEqual(summary(await auth.authenticate(bearer(OPS))), {
      subject: 'ops',
      method: 'token',
      roles: ['admin'],
      accounts: {},
      groups: ['oncall'],
    });
  });

  test('a token from the environment given, else from the process environment', async (t) => {
    const cfg = config({ auth: { tokens: [{ subject: 'alice', tokenEnv: 'AUTHENTICATOR_TEST_TOKEN' }] } });
    const given = authenticatorOf(t, cfg, { env: { AUTHENTICATOR_TEST_TOKEN: ALICE } });
    assert.equal((await given.authenticate(bearer(ALICE))).subject, 'alice');
    assert.throws(() => createAuthenticator(cfg, { env: {} }), /AUTHENTICATOR_TEST_TOKEN is not set/);
    process.env.AUTHENTICATOR_TEST_TOKEN = OPS;
    t.after(() => delete process.env.AUTHENTICATOR_TEST_TOKEN);
    const fromProcess = authenticatorOf(t, cfg);
    assert.equal((await fromProcess.authenticate(bearer(OPS))).subject, 'alice');
    assert.match(await refusal(fromProcess.authenticate(bearer(ALICE))), /^bearer token not recognized$/);
  });

  test('a static token is matched before anything else, even one spelled like a JWT', async (t) => {
    const lookalike = await jwt({ sub: 'ci' });
    const auth = authenticatorOf(t, config({ auth: { tokens: [{ subject: 'alice', token: lookalike }], ...jwtAuth() } }));
    assert.equal((await auth.authenticate(bearer(lookalike))).method, 'token');
  });

  test('an unknown token that is no JWT is refused', async (t) => {
    const auth = authenticatorOf(t, config({ auth: { tokens: [{ subject: 'alice', token: ALICE }], ...jwtAuth() } }));
    assert.equal(await refusal(auth.authenticate(bearer('not-a-configured-token-at-all'))), 'bearer token not recognized');
  });

  test('a token file too short is logged with the logger given, and without one the token is refused all the same', async (t) => {
    const short = writeFile('short');
    const cfg = config({ auth: { tokens: [{ subject: 'alice', tokenFile: short }] } });
    const { logger, errors } = recordingLogger();
    const logged = authenticatorOf(t, cfg, { logger });
    assert.equal(await refusal(logged.authenticate(bearer('short'))), 'bearer token not recognized');
    assert.deepEqual(errors, ['token file holds fewer than 16 characters; token ignored']);
    const silent = authenticatorOf(t, cfg);
    assert.equal(await refusal(silent.authenticate(bearer('short'))), 'bearer token not recognized');
  });
});

describe('JWTs, replica tokens and OIDC tokens', () => {
  test('an auth.jwt token names its subject with the jwt rules, the groups of its groups claim and its expiry', async (t) => {
    const auth = authenticatorOf(t, config({ auth: jwtAuth() }));
    const token = await jwt({ sub: 'ci', teams: ['deployers', 'qa'] });
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    const ci = await auth.authenticate(bearer(token));
    assert.deepEqual(summary(ci), {
      subject: 'ci',
      method: 'jwt',
      roles: ['read', 'write'],
      accounts: { write: ['ci-*'] },
      groups: ['deployers', 'qa'],
    });
    assert.equal(ci.expiresAt, exp * 1000);
    assert.equal(ci.revocation, undefined, 'a JWT ends at its exp, not by a file');
  });

  test('an auth.jwt token the key did not sign is refused with the verifier reason', async (t) => {
    const auth = authenticatorOf(t, config({ auth: jwtAuth() }));
    const other = await generateKeyPair('ES256');
    assert.equal(
      await refusal(auth.authenticate(bearer(await jwt({ sub: 'ci' }, other.privateKey as CryptoKey)))),
      'token signature invalid',
    );
  });

  test('a JWT on a gateway without auth.jwt nor auth.oidc is refused saying so', async (t) => {
    const auth = authenticatorOf(t, config({ auth: { tokens: [{ subject: 'alice', token: ALICE }] } }));
    assert.equal(
      await refusal(auth.authenticate(bearer(await jwt({ sub: 'ci' })))),
      'bearer token not recognized: it is a JWT but no auth.jwt issuer is configured',
    );
  });

  test('a replica token names the replica with the roles replica and read, whatever the rules say', async (t) => {
    const auth = authenticatorOf(t, config({ auth: { replicaSecretFile, ...jwtAuth() } }));
    const token = await createReplicaTokenSigner(replicaSecretFile, 'gw-2').token();
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    const replica = await auth.authenticate(bearer(token));
    assert.deepEqual(replica, {
      subject: 'replica:gw-2',
      method: 'replica',
      roles: new Set(['replica', 'read']),
      accounts: {},
      expiresAt: exp * 1000,
    });
  });

  test('a replica token signed with another secret is refused', async (t) => {
    const auth = authenticatorOf(t, config({ auth: { replicaSecretFile } }));
    const token = await createReplicaTokenSigner(writeFile('another-replica-secret-of-32-bytes!!'), 'gw-2').token();
    assert.match(await refusal(auth.authenticate(bearer(token))), /signature invalid/);
  });

  test('an auth.jwt token on a gateway with replicas too is still an auth.jwt token', async (t) => {
    const auth = authenticatorOf(t, config({ auth: { replicaSecretFile, ...jwtAuth() } }));
    assert.equal((await auth.authenticate(bearer(await jwt({ sub: 'ci' })))).method, 'jwt');
  });

  test('a replica token on a gateway without auth.replicaSecretFile is refused saying so, or by auth.jwt', async (t) => {
    const token = await createReplicaTokenSigner(replicaSecretFile, 'gw-2').token();
    const bare = authenticatorOf(t, config({ auth: { tokens: [{ subject: 'alice', token: ALICE }] } }), { oidc: oidcOf(OKTA) });
    assert.equal(await refusal(bare.authenticate(bearer(token))), 'replica token presented but this gateway has no auth.replicaSecretFile');
    const withJwt = authenticatorOf(t, config({ auth: jwtAuth() }));
    assert.match(await refusal(withJwt.authenticate(bearer(token))), /^token /, 'auth.jwt refuses it');
  });

  test('a token of an auth.oidc provider names oidc:<provider>:<username> with its groups and expiry', async (t) => {
    const auth = authenticatorOf(t, config({ auth: jwtAuth() }), { oidc: oidcOf(OKTA, DEX) });
    const token = await jwt({ iss: OIDC_A, sub: 'dana' });
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    const dana = await auth.authenticate(bearer(token));
    assert.deepEqual(summary(dana), { subject: 'okta:dana', method: 'oidc', roles: ['read'], accounts: {}, groups: ['okta:devs'] });
    assert.equal(dana.expiresAt, exp * 1000);
    assert.equal((await auth.authenticate(bearer(await jwt({ iss: OIDC_B, sub: 'erin' })))).subject, 'dex:erin');
    assert.equal((await auth.authenticate(bearer(await jwt({ sub: 'ci' })))).method, 'jwt', 'the auth.jwt issuer is still auth.jwt');
  });

  test("a provider's refusal is the caller's", async (t) => {
    const auth = authenticatorOf(t, config(), { oidc: oidcOf(OKTA) });
    assert.equal(
      await refusal(auth.authenticate(bearer(await jwt({ iss: OIDC_A, sub: 'refused' })))),
      'token of OIDC provider okta expired',
    );
  });

  test('a JWT of no provider, on a gateway with auth.oidc and no auth.jwt, is refused naming its issuer and the providers', async (t) => {
    const oidc = oidcOf(OKTA, DEX);
    const auth = authenticatorOf(t, config(), { oidc });
    assert.equal(
      await refusal(auth.authenticate(bearer(await jwt({ iss: 'https://elsewhere.example', sub: 'x' })))),
      'bearer token not recognized: its issuer "https://elsewhere.example" is none of the OIDC providers of auth.oidc (https://login.example, https://sso.example)',
    );
    assert.equal(
      await refusal(auth.authenticate(bearer(await jwt({ iss: undefined, sub: 'x' })))),
      'bearer token not recognized: its issuer "" is none of the OIDC providers of auth.oidc (https://login.example, https://sso.example)',
    );
    assert.deepEqual(oidc.asked, ['https://elsewhere.example'], 'the providers are asked only about an issuer a token names');
  });

  test('the providers come from auth.oidc when none are given', async (t) => {
    const auth = authenticatorOf(
      t,
      config({
        insecure: true,
        auth: { oidc: { providers: [{ name: 'okta', issuer: OIDC_A, clientId: 'outpost' }] } } as GatewayConfigInput['auth'],
      }),
    );
    assert.match(
      await refusal(auth.authenticate(bearer(await jwt({ sub: 'x' })))),
      /none of the OIDC providers of auth\.oidc \(https:\/\/login\.example\)$/,
    );
  });
});

describe('client certificates', () => {
  test('REQUIRE refuses a request without one, a token and insecure mode notwithstanding', async (t) => {
    const auth = authenticatorOf(t, config({ auth: { tokens: [{ subject: 'alice', token: ALICE }] } }, { clientAuth: 'REQUIRE' }));
    assert.equal(
      await refusal(auth.authenticate(bearer(ALICE, { secure: true }))),
      'client certificate required (tls.clientAuth REQUIRE) but none was presented',
    );
    assert.equal(await refusal(auth.authenticate(bearer(ALICE))), 'client certificate required: connect with TLS');
    const insecure = authenticatorOf(t, config({ insecure: true }, { clientAuth: 'REQUIRE' }));
    assert.equal(
      await refusal(insecure.authenticate({ secure: true }, { anonymousRoles: ['read'] })),
      'client certificate required (tls.clientAuth REQUIRE) but none was presented',
    );
  });

  test('a certificate alone names its subject with the certificate rules, its O values as groups', async (t) => {
    const auth = authenticatorOf(t, config({}, { clientAuth: 'REQUIRE' }));
    const agent = await auth.authenticate({ secure: true, certificate: AGENT_CERT });
    assert.deepEqual(summary(agent), {
      subject: 'CN=agent-1,O=agents',
      method: 'certificate',
      roles: ['agent'],
      accounts: { agent: ['edge-*'] },
      groups: ['agents'],
    });
    assert.deepEqual(agent.attributes, { CN: ['agent-1'], O: ['agents'] });
  });

  test('a certificate of another CA or no subject filter is refused, a valid token with it too', async (t) => {
    const auth = authenticatorOf(
      t,
      config({ auth: { tokens: [{ subject: 'alice', token: ALICE }] } }, { clientAuth: 'OPTIONAL', subjectFilters: ['^CN=agent-'] }),
    );
    assert.equal(
      await refusal(auth.authenticate(bearer(ALICE, { secure: true, certificate: FOREIGN_CERT }))),
      'client certificate CN=agent-1,O=agents is not signed by the configured CA (tls.caFile): SELF_SIGNED_CERT_IN_CHAIN',
    );
    assert.equal(
      await refusal(auth.authenticate(bearer(ALICE, { secure: true, certificate: certificate({ CN: ['ops'] }) }))),
      'client certificate subject CN=ops matches no subject filter (tls.subjectFilters)',
    );
  });

  test('with a valid certificate a token names the caller', async (t) => {
    const auth = authenticatorOf(t, config({ auth: { tokens: [{ subject: 'alice', token: ALICE }] } }, { clientAuth: 'REQUIRE' }));
    const alice = await auth.authenticate(bearer(ALICE, { secure: true, certificate: AGENT_CERT }));
    assert.deepEqual([alice.subject, alice.method], ['alice', 'token']);
  });

  test('OPTIONAL: a token without a certificate is enough, nothing at all is refused naming both', async (t) => {
    const auth = authenticatorOf(t, config({ auth: { tokens: [{ subject: 'alice', token: ALICE }] } }, { clientAuth: 'OPTIONAL' }));
    assert.equal((await auth.authenticate(bearer(ALICE, { secure: true }))).subject, 'alice');
    assert.equal(
      await refusal(auth.authenticate({ secure: true })),
      'authentication required: present a client certificate signed by the configured CA or a bearer token',
    );
  });

  test('without TLS client authentication a certificate is neither checked nor a credential', async (t) => {
    const auth = authenticatorOf(t, config({ auth: { tokens: [{ subject: 'alice', token: ALICE }] } }));
    const noToken = 'authentication required: present a bearer token (Authorization: Bearer <token>)';
    assert.equal(await refusal(auth.authenticate({ secure: true, certificate: AGENT_CERT })), noToken);
    assert.equal(await refusal(auth.authenticate({ secure: true, certificate: FOREIGN_CERT })), noToken);
    assert.equal((await auth.authenticate(bearer(ALICE, { secure: true, certificate: FOREIGN_CERT }))).subject, 'alice');
    const none = authenticatorOf(t, config({}, { clientAuth: 'NONE' }));
    assert.equal(await refusal(none.authenticate({ secure: true, certificate: AGENT_CERT })), noToken);
  });
});

describe('the Authorization scheme', () => {
  test('another scheme than Bearer is refused naming it, in insecure mode and on open reads too', async (t) => {
    const expected = 'unsupported Authorization scheme "Basic": send "Authorization: Bearer <token>"';
    const auth = authenticatorOf(t, config());
    assert.equal(await refusal(auth.authenticate({ secure: false, otherAuthorization: 'Basic' }, { anonymousRoles: ['read'] })), expected);
    const insecure = authenticatorOf(t, config({ insecure: true }));
    assert.equal(await refusal(insecure.authenticate({ secure: false, otherAuthorization: 'Basic' })), expected);
  });

  test('the certificate verdict comes before it', async (t) => {
    const auth = authenticatorOf(t, config({}, { clientAuth: 'REQUIRE' }));
    assert.match(await refusal(auth.authenticate({ secure: true, otherAuthorization: 'Basic' })), /^client certificate required/);
  });
});

describe("the dashboard's session cookie", () => {
  const BROWSER: BrowserRequest = { cookie: 'session=dana', method: 'GET', path: '/armory/accounts', csrf: 'x' };
  const DANA = principalFromRules('okta:dana', 'oidc', RULES as never, undefined, {}, ['okta:devs']);

  function sessions() {
    const seen: BrowserRequest[] = [];
    return {
      seen,
      resolver: {
        async authenticate(request: BrowserRequest) {
          seen.push(request);
          if (request.cookie === 'session=dana') return DANA;
          if (request.cookie === 'session=forged') throw new ConnectError('the CSRF header is missing', Code.PermissionDenied);
          return undefined;
        },
      },
    };
  }

  test('is never looked at before the sign-in module sets a resolver', async (t) => {
    const auth = authenticatorOf(t, config());
    assert.match(await refusal(auth.authenticate({ secure: false, browser: BROWSER })), /^authentication required/);
  });

  test('names the session principal, the resolver seeing the request', async (t) => {
    const auth = authenticatorOf(t, config());
    const s = sessions();
    auth.useSessions(s.resolver);
    assert.equal(await auth.authenticate({ secure: false, browser: BROWSER }), DANA);
    assert.deepEqual(s.seen, [BROWSER]);
  });

  test('a bearer token takes precedence: the cookie is not even read', async (t) => {
    const auth = authenticatorOf(t, config({ auth: { tokens: [{ subject: 'alice', token: ALICE }] } }));
    const s = sessions();
    auth.useSessions(s.resolver);
    assert.equal((await auth.authenticate(bearer(ALICE, { browser: BROWSER }))).subject, 'alice');
    assert.equal(await refusal(auth.authenticate(bearer('unknown-token-0123456789', { browser: BROWSER }))), 'bearer token not recognized');
    assert.deepEqual(s.seen, []);
  });

  test("the resolver's refusal is the caller's", async (t) => {
    const auth = authenticatorOf(t, config({ insecure: true }));
    auth.useSessions(sessions().resolver);
    assert.equal(
      await refusal(auth.authenticate({ secure: false, browser: { ...BROWSER, cookie: 'session=forged' } }), Code.PermissionDenied),
      'the CSRF header is missing',
    );
  });

  test('no session in the cookies: the certificate, insecure mode or anonymous reads decide', async (t) => {
    const other = { ...BROWSER, cookie: 'theme=dark' };
    const withCert = authenticatorOf(t, config({}, { clientAuth: 'OPTIONAL' }));
    withCert.useSessions(sessions().resolver);
    assert.equal((await withCert.authenticate({ secure: true, browser: other, certificate: AGENT_CERT })).method, 'certificate');
    assert.equal(
      (await withCert.authenticate({ secure: true, browser: BROWSER, certificate: AGENT_CERT })).subject,
      'okta:dana',
      'a session over a certificate: the session names the caller',
    );
    const plain = authenticatorOf(t, config());
    plain.useSessions(sessions().resolver);
    assert.equal((await plain.authenticate({ secure: false, browser: other }, { anonymousRoles: ['read'] })).method, 'anonymous');
    assert.match(await refusal(plain.authenticate({ secure: false, browser: other })), /^authentication required/);
  });

  test('a request without cookies does not ask the resolver', async (t) => {
    const auth = authenticatorOf(t, config({ insecure: true }));
    const s = sessions();
    auth.useSessions(s.resolver);
    assert.equal((await auth.authenticate(NOTHING)).method, 'insecure');
    assert.deepEqual(s.seen, []);
  });
});

describe('nothing presented', () => {
  test('insecure mode gets every role, and over an anonymous read', async (t) => {
    const auth = authenticatorOf(t, config({ insecure: true }));
    assert.deepEqual(await auth.authenticate(NOTHING), insecurePrincipal());
    assert.deepEqual(await auth.authenticate(NOTHING, { anonymousRoles: ['read'] }), insecurePrincipal());
  });

  test('insecure mode still checks a token presented', async (t) => {
    const auth = authenticatorOf(t, config({ insecure: true }));
    assert.equal(await refusal(auth.authenticate(bearer('unknown-token-0123456789'))), 'bearer token not recognized');
  });

  test('a route open to anonymous readers gets an anonymous principal with the roles it names', async (t) => {
    const auth = authenticatorOf(t, config({ auth: { readAccess: 'open' } }));
    assert.equal(auth.readAccess, 'open');
    assert.deepEqual(await auth.authenticate(NOTHING, { anonymousRoles: ['read'] }), {
      subject: 'anonymous',
      method: 'anonymous',
      roles: new Set(['read']),
      accounts: {},
    });
  });

  test('otherwise UNAUTHENTICATED asking for a bearer token', async (t) => {
    const auth = authenticatorOf(t, config());
    assert.equal(auth.readAccess, 'authenticated');
    assert.equal(
      await refusal(auth.authenticate(NOTHING)),
      'authentication required: present a bearer token (Authorization: Bearer <token>)',
    );
  });
});

describe('a principal vouched for by another replica', () => {
  test("gets this replica's rules for its kind", async (t) => {
    const auth = authenticatorOf(t, config());
    const there = principalFromRules('alice', 'token', [], undefined, {}, ['devs']);
    assert.deepEqual(summary(auth.vouched(describePrincipal(there))), {
      subject: 'alice',
      method: 'token',
      roles: ['read', 'write'],
      accounts: { write: ['prod-*'] },
      groups: ['devs'],
    });
  });

  test('an insecure caller gets every role only when this replica is insecure too', async (t) => {
    const description = describePrincipal(insecurePrincipal('dev'));
    assert.deepEqual(authenticatorOf(t, config({ insecure: true })).vouched(description), insecurePrincipal('dev'));
    assert.deepEqual(summary(authenticatorOf(t, config()).vouched(description)).roles, []);
  });
});

describe('revocation of a token-file token on a live stream', () => {
  /**
   * setTimeout and clearTimeout replaced for the poll's timers (those src/shared/periodic-job.ts sets): they are kept
   * for the test to fire, never run by the clock. The shard runner shares this process with other test files, so
   * every other timer, and every handle that is not one of ours, goes to the real functions.
   */
  function fakeTimers(t: TestContext) {
    const realSetTimeout = globalThis.setTimeout;
    const realClearTimeout = globalThis.clearTimeout;
    const timers = new Map<object, { fire: () => void; ms: number }>();
    t.mock.method(globalThis, 'setTimeout', (fire: () => void, ms?: number, ...args: unknown[]) => {
      if (!new Error().stack?.includes('periodic-job')) return realSetTimeout(fire, ms, ...args);
      const handle = { unref: () => handle, ref: () => handle };
      timers.set(handle, { fire, ms: ms ?? 0 });
      return handle;
    });
    t.mock.method(globalThis, 'clearTimeout', (handle?: unknown) => {
      if (typeof handle === 'object' && handle !== null && timers.delete(handle)) return;
      realClearTimeout(handle as Parameters<typeof clearTimeout>[0]);
    });
    return {
      /** The delays of the poll timers pending. */
      pending: () => [...timers.values()].map((x) => x.ms),
      /** Fires the pending poll timers, as the clock would. */
      fire() {
        const due = [...timers.values()];
        timers.clear();
        for (const x of due) x.fire();
      },
    };
  }

  /** Subscribes to a principal's revocation; resolves with the message it is told. */
  function revoked(principal: Principal) {
    assert.ok(principal.revocation);
    let stop = () => {};
    const told = new Promise<string>((resolve) => {
      stop = principal.revocation!.subscribe(resolve);
    });
    return { told, stop };
  }

  test('a rotated file ends the streams of its old token at the next poll (every 2 s), not those of another file', {
    timeout: 10_000,
  }, async (t) => {
    const timers = fakeTimers(t);
    const probeFile = writeFile('probe-token-0123456789abcdef');
    const aliceFile = writeFile(ALICE);
    const opsFile = writeFile(OPS);
    const auth = createAuthenticator(
      config({
        auth: {
          tokens: [
            { subject: 'probe', tokenFile: probeFile },
            { subject: 'alice', tokenFile: aliceFile },
            { subject: 'ops', tokenFile: opsFile },
          ],
        },
      }),
    );
    const probe = await auth.authenticate(bearer('probe-token-0123456789abcdef'));
    const alice = await auth.authenticate(bearer(ALICE));
    const ops = await auth.authenticate(bearer(OPS));
    unlinkSync(probeFile);
    // The first stream starts the poll and a check at once that re-checks every stream: the probe, whose file is
    // gone, hears it — that check is then over.
    const probeStream = revoked(probe);
    const aliceStream = revoked(alice);
    const opsStream = revoked(ops);
    assert.deepEqual(timers.pending(), [2000], 'the files are polled every 2 s by default');
    assert.equal(await probeStream.told, 'static token was revoked; reconnect with a valid credential');
    writeFile('ops-token-rotated-0123456789', opsFile);
    timers.fire();
    const first = await Promise.race([aliceStream.told.then((m) => `alice: ${m}`), opsStream.told.then((m) => `ops: ${m}`)]);
    assert.equal(first, 'ops: static token was revoked; reconnect with a valid credential');
    assert.equal(await auth.authenticate(bearer('ops-token-rotated-0123456789')).then((p) => p.subject), 'ops');
    aliceStream.stop();
    opsStream.stop();
    probeStream.stop();
    auth.close();
  });

  test('the poll period is revocationCheckMs when given, and close leaves no poll behind', async (t) => {
    const timers = fakeTimers(t);
    const auth = createAuthenticator(config({ auth: { tokens: [{ subject: 'alice', tokenFile: writeFile(ALICE) }] } }), {
      revocationCheckMs: 250,
    });
    const stream = revoked(await auth.authenticate(bearer(ALICE)));
    assert.deepEqual(timers.pending(), [250]);
    auth.close();
    assert.deepEqual(timers.pending(), [], 'nothing polls after close');
    stream.stop();
  });
});
