/**
 * Bearer tokens over real sockets (gRPC over h2c, REST over HTTP/1.1): static tokens (inline, file with rotation,
 * environment), JWTs (HMAC secret and public key; expired, wrong signature, wrong audience, not yet valid), replica
 * tokens, insecure mode, `readAccess: open`, and the authorization table (401 before 404, 403 naming the role).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { connectRequirement, restRequirement } from '../../src/gateway/auth/authorization.js';
import { GATEWAY_PATH_RULES } from '../../src/gateway/modules/feature-paths.js';
import { createReplicaTokenSigner } from '../../src/gateway/auth/replica-token.js';
import type { TestGateway } from '../../testkit/test-gateway.js';
import { Code, grpcAdmin, grpcAgentStream, grpcRead, restCall, startAuthGateway } from '../../testkit/auth-helpers.js';

const READ_TOKEN = 'read-only-token-0123456789';
const ADMIN_TOKEN = 'admin-token-0123456789abcdef';
const SECRET = 'jwt-secret-0123456789-0123456789-abcdef';
const REPLICA_SECRET = 'replica-secret-0123456789-0123456789-abcdef';
const rules = [
  { kind: 'token' as const, subject: '^reader$', roles: ['read' as const] },
  { kind: 'token' as const, subject: '^admin$', roles: ['read' as const, 'write' as const, 'admin' as const], accounts: ['*'] },
  { kind: 'token' as const, subject: '^(rotated|from-env)$', roles: ['read' as const] },
  { kind: 'jwt' as const, subject: '^jwt-user$', roles: ['read' as const] },
  { kind: 'jwt' as const, subject: '^agent-jwt$', roles: ['agent' as const], accounts: ['prod-*'] },
];

/** `exp: null` leaves exp out; `iat: null` leaves iat out. */
function jwt(
  claims: { sub?: string; aud?: string; iss?: string; exp?: number | null; iat?: number | null; nbf?: number },
  secret = SECRET,
) {
  const now = Math.floor(Date.now() / 1000);
  const t = new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(claims.iss ?? 'https://issuer.test')
    .setAudience(claims.aud ?? 'outpost');
  if (claims.iat !== null) t.setIssuedAt(claims.iat);
  if (claims.sub) t.setSubject(claims.sub);
  if (claims.exp !== null) t.setExpirationTime(claims.exp ?? now + 300);
  if (claims.nbf) t.setNotBefore(claims.nbf);
  return t.sign(new TextEncoder().encode(secret));
}

describe('bearer tokens', () => {
  let dir: string;
  let gw: TestGateway;
  let tokenFile: string;
  let replicaSecretFile: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-tokens-'));
    tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'first-rotated-token-0123456789\n');
    writeFileSync(join(dir, 'jwt-secret'), `${SECRET}\n`);
    replicaSecretFile = join(dir, 'replica-secret');
    writeFileSync(replicaSecretFile, REPLICA_SECRET);
    process.env.OUTPOST_TEST_AUTH_TOKEN = 'token-from-env-0123456789';
    gw = await startAuthGateway({
      auth: {
        tokens: [
          { subject: 'reader', token: READ_TOKEN },
          { subject: 'admin', token: ADMIN_TOKEN },
          { subject: 'rotated', tokenFile },
          { subject: 'from-env', tokenEnv: 'OUTPOST_TEST_AUTH_TOKEN' },
        ],
        jwt: { issuer: 'https://issuer.test', audience: 'outpost', secretFile: join(dir, 'jwt-secret'), clockToleranceSeconds: 5 },
        replicaSecretFile,
      },
      authorization: { rules },
    });
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
    delete process.env.OUTPOST_TEST_AUTH_TOKEN;
  });

  test('no credentials: UNAUTHENTICATED / 401, also on a route that does not exist', async () => {
    const r = await grpcRead(gw.gateway.grpcUrl, {});
    assert.equal(r.code, Code.Unauthenticated);
    assert.match(r.message, /authentication required/);
    const rest = await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', {});
    assert.deepEqual([rest.status, rest.body.error], [401, 'unauthenticated']);
    assert.equal((await restCall(gw.gateway.httpUrl, 'POST', '/armory/agent/operations', {}, {})).status, 401);
    assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/no/such/route', {})).status, 401);
    assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/health', {})).status, 200);
  });

  test('static token: right one admitted, wrong one and other schemes refused', async () => {
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: READ_TOKEN })).code, 'ok');
    assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { token: READ_TOKEN })).status, 200);
    const wrong = await grpcRead(gw.gateway.grpcUrl, { token: `${READ_TOKEN}x` });
    assert.deepEqual(wrong, { code: Code.Unauthenticated, message: 'bearer token not recognized' });
    assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { token: 'nope' })).status, 401);
    const basic = await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { authorization: 'Basic dXNlcjpwYXNz' });
    assert.equal(basic.status, 401);
    assert.match(basic.body.message!, /unsupported Authorization scheme "Basic"/);
  });

  test('token from the environment', async () => {
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: 'token-from-env-0123456789' })).code, 'ok');
  });

  test('token file rotation: the new token works at once, the old one stops working', async () => {
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: 'first-rotated-token-0123456789' })).code, 'ok');
    writeFileSync(tokenFile, 'second-rotated-token-abcdefghij-0123\n');
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: 'second-rotated-token-abcdefghij-0123' })).code, 'ok');
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: 'first-rotated-token-0123456789' })).code, Code.Unauthenticated);
  });

  test('403 names the missing role: read token on admin routes, token without agent role on AgentService/Connect', async () => {
    const admin = await grpcAdmin(gw.gateway.grpcUrl, { token: READ_TOKEN });
    assert.equal(admin.code, Code.PermissionDenied);
    assert.match(admin.message, /reader lacks the role "admin" required for outpost\.api\.v1\.AccountService\/DeleteAccounts/);
    const rest = await restCall(gw.gateway.httpUrl, 'POST', '/armory/accounts', { token: READ_TOKEN }, [{ name: 'x' }]);
    assert.deepEqual([rest.status, rest.body.error], [403, 'permission_denied']);
    assert.match(rest.body.message!, /lacks the role "admin"/);
    const stream = await grpcAgentStream(gw.gateway.grpcUrl, { token: ADMIN_TOKEN });
    assert.equal(stream.code, Code.PermissionDenied);
    assert.match(stream.message, /admin lacks the role "agent" required for outpost\.agent\.v1\.AgentService\/Connect/);
    const internal = await restCall(gw.gateway.httpUrl, 'POST', '/armory/agent/operationresults', { token: ADMIN_TOKEN }, {});
    assert.equal(internal.status, 403);
    assert.match(internal.body.message!, /lacks the role "replica"/);
  });

  test('JWT: valid admitted with its subject; expired, wrongly signed, wrong audience, not yet valid refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: await jwt({ sub: 'jwt-user' }) })).code, 'ok');
    // nbf in the past and a lifetime just under the limit are fine
    assert.equal(
      (await grpcRead(gw.gateway.grpcUrl, { token: await jwt({ sub: 'jwt-user', nbf: now - 60, exp: now + 86_000 }) })).code,
      'ok',
    );
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: await jwt({ sub: 'jwt-user', iat: null, exp: now + 3600 }) })).code, 'ok');
    assert.equal((await grpcAgentStream(gw.gateway.grpcUrl, { token: await jwt({ sub: 'agent-jwt' }) })).code, 'ok');
    const cases: [string, Promise<string>, RegExp][] = [
      ['expired', jwt({ sub: 'jwt-user', exp: now - 60 }), /^token expired$/],
      ['wrong signature', jwt({ sub: 'jwt-user' }, 'another-secret-0123456789-0123456789'), /^token signature invalid$/],
      ['wrong audience', jwt({ sub: 'jwt-user', aud: 'someone-else' }), /^token audience \(aud\) does not match/],
      ['wrong issuer', jwt({ sub: 'jwt-user', iss: 'https://evil.test' }), /^token issuer \(iss\) does not match/],
      ['not yet valid', jwt({ sub: 'jwt-user', nbf: now + 600 }), /^token not yet valid/],
      ['no subject', jwt({}), /no string "sub" claim/],
      ['no exp', jwt({ sub: 'jwt-user', exp: null }), /^token has no exp claim$/],
      [
        'lifetime above maxLifetimeSeconds',
        jwt({ sub: 'jwt-user', exp: now + 3600 * 24 * 365 }),
        /lifetime .* exceeds the longest accepted 86400 s \(auth.jwt.maxLifetimeSeconds\)/,
      ],
      ['no iat, exp too far from now', jwt({ sub: 'jwt-user', iat: null, exp: now + 86_400 * 2 }), /exceeds the longest accepted/],
      [
        'iat a day ago, exp in an hour: lifetime above 24 h',
        jwt({ sub: 'jwt-user', iat: now - 86_400, exp: now + 3600 }),
        /exceeds the longest accepted/,
      ],
    ];
    for (const [name, token, expected] of cases) {
      const r = await grpcRead(gw.gateway.grpcUrl, { token: await token });
      assert.equal(r.code, Code.Unauthenticated, name);
      assert.match(r.message, expected, name);
      const rest = await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { token: await token });
      assert.equal(rest.status, 401, name);
      assert.match(rest.body.message!, expected, name);
    }
  });

  test('identity kinds are separate namespaces: a JWT with sub "admin" never gets the static admin token\'s roles', async () => {
    // the static admin token passes authorization (whatever DeleteAccounts with no names then answers)
    const real = await grpcAdmin(gw.gateway.grpcUrl, { token: ADMIN_TOKEN });
    assert.ok(real.code !== Code.PermissionDenied && real.code !== Code.Unauthenticated, `admin token refused: ${real.message}`);
    const forged = await grpcAdmin(gw.gateway.grpcUrl, { token: await jwt({ sub: 'admin' }) });
    assert.equal(forged.code, Code.PermissionDenied);
    assert.match(forged.message, /admin lacks the role "admin"/);
    const rest = await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { token: await jwt({ sub: 'reader' }) });
    assert.equal(rest.status, 403, 'a JWT named like the static read token gets no read role');
  });

  test('replica tokens open the internal routes; a forged one does not', async () => {
    const signer = createReplicaTokenSigner(replicaSecretFile, 'gw-other');
    const token = await signer.token();
    assert.equal(await signer.token(), token, 'cached while fresh');
    const r = await restCall(gw.gateway.httpUrl, 'POST', '/armory/agent/operationresults', { token }, {});
    assert.ok(r.status !== 401 && r.status !== 403, `replica admitted (got ${r.status} ${JSON.stringify(r.body)})`);
    assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { token })).status, 200);
    // a replica token may not do admin work
    assert.equal((await grpcAdmin(gw.gateway.grpcUrl, { token })).code, Code.PermissionDenied);
    const forgedFile = join(dir, 'forged-secret');
    writeFileSync(forgedFile, 'a-different-secret-0123456789-0123456789');
    const forged = await createReplicaTokenSigner(forgedFile, 'gw-evil').token();
    const refused = await restCall(gw.gateway.httpUrl, 'POST', '/armory/agent/operationresults', { token: forged }, {});
    assert.equal(refused.status, 401);
    assert.match(refused.body.message!, /replica token signature invalid/);
  });
});

describe('JWT with a public key', () => {
  test('ES256 tokens verify against the PEM public key; HS256 tokens are refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-jwt-pk-'));
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    writeFileSync(join(dir, 'pub.pem'), await exportSPKI(publicKey));
    const gw = await startAuthGateway({
      auth: { jwt: { issuer: 'https://issuer.test', audience: 'outpost', publicKeyFile: join(dir, 'pub.pem'), algorithms: ['ES256'] } },
      authorization: { rules },
    });
    try {
      const good = await new SignJWT({})
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer('https://issuer.test')
        .setAudience('outpost')
        .setSubject('jwt-user')
        .setExpirationTime('5m')
        .sign(privateKey);
      assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: good })).code, 'ok');
      const hs = await grpcRead(gw.gateway.grpcUrl, { token: await jwt({ sub: 'jwt-user' }) });
      assert.equal(hs.code, Code.Unauthenticated);
      assert.match(hs.message, /algorithm not allowed/);
    } finally {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('insecure mode and open reads', () => {
  test('insecure: no credentials get every right; a presented token is still verified', async () => {
    const gw = await startAuthGateway({
      insecure: true,
      auth: { tokens: [{ subject: 'reader', token: READ_TOKEN }] },
      authorization: { rules },
    });
    try {
      assert.equal((await grpcRead(gw.gateway.grpcUrl, {})).code, 'ok');
      assert.equal((await grpcAgentStream(gw.gateway.grpcUrl, {})).code, 'ok');
      assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', {})).status, 200);
      const wrong = await grpcRead(gw.gateway.grpcUrl, { token: 'wrong-token-0123456789' });
      assert.equal(wrong.code, Code.Unauthenticated);
      assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { token: 'wrong-token-0123456789' })).status, 401);
      // a valid token is the principal it names, not the all-powerful anonymous one
      assert.equal((await grpcAdmin(gw.gateway.grpcUrl, { token: READ_TOKEN })).code, Code.PermissionDenied);
    } finally {
      await gw.close();
    }
  });

  test('readAccess open: reads need no credentials, writes still do, bad tokens are still refused', async () => {
    const gw = await startAuthGateway({
      auth: { readAccess: 'open', tokens: [{ subject: 'reader', token: READ_TOKEN }] },
      authorization: { rules },
    });
    try {
      assert.equal((await grpcRead(gw.gateway.grpcUrl, {})).code, 'ok');
      assert.equal((await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', {})).status, 200);
      assert.equal((await grpcAdmin(gw.gateway.grpcUrl, {})).code, Code.Unauthenticated);
      assert.equal((await restCall(gw.gateway.httpUrl, 'DELETE', '/armory/accounts', {})).status, 401);
      assert.equal((await grpcAgentStream(gw.gateway.grpcUrl, {})).code, Code.Unauthenticated);
      assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: 'wrong-token-0123456789' })).code, Code.Unauthenticated);
    } finally {
      await gw.close();
    }
  });

  test('a gateway whose token file or environment variable is missing does not start', async () => {
    await assert.rejects(
      startAuthGateway({ auth: { tokens: [{ subject: 'x', tokenFile: '/nonexistent/token' }] } }),
      /auth\.tokens\[0\]\.tokenFile: cannot read \/nonexistent\/token/,
    );
    await assert.rejects(
      startAuthGateway({ auth: { tokens: [{ subject: 'x', tokenEnv: 'OUTPOST_TEST_UNSET_VARIABLE' }] } }),
      /OUTPOST_TEST_UNSET_VARIABLE is not set/,
    );
  });
});

describe('authorization table', () => {
  test('Connect methods', () => {
    assert.equal(connectRequirement('outpost.agent.v1.AgentService', 'Connect'), 'agent');
    assert.equal(connectRequirement('outpost.api.v1.ObjectService', 'ListObjects'), 'read');
    assert.equal(connectRequirement('outpost.api.v1.ObjectService', 'GetObject'), 'read');
    assert.equal(connectRequirement('outpost.api.v1.OperationService', 'SubmitOperation'), 'write');
    for (const m of ['GetOperation', 'WaitOperation', 'ListOperations'])
      assert.equal(connectRequirement('outpost.api.v1.OperationService', m), 'read');
    for (const m of ['ListAccounts', 'GetAccount', 'ListAgents'])
      assert.equal(connectRequirement('outpost.api.v1.AccountService', m), 'read');
    for (const m of ['CreateAccounts', 'SetAccountStates', 'PutDynamicAccounts', 'DeleteAccounts', 'ReleaseBinding', 'Future']) {
      assert.equal(connectRequirement('outpost.api.v1.AccountService', m), 'admin');
    }
    assert.equal(connectRequirement('outpost.agent.v1.AgentService', 'Other'), 'admin');
    assert.equal(connectRequirement('some.Unknown', 'X'), 'admin');
    // gRPC health: nothing at all (probes carry no credentials); reflection: read (so `readAccess: open` opens it).
    for (const m of ['Check', 'Watch']) assert.equal(connectRequirement('grpc.health.v1.Health', m), 'none');
    assert.equal(connectRequirement('grpc.health.v1.Health', 'List'), 'admin');
    for (const v of ['v1', 'v1alpha'])
      assert.equal(connectRequirement(`grpc.reflection.${v}.ServerReflection`, 'ServerReflectionInfo'), 'read');
  });

  test('REST routes', () => {
    const table: [string, string, string][] = [
      ['GET', '/health', 'none'],
      ['HEAD', '/health', 'none'],
      ['POST', '/health', 'admin'],
      ['GET', '/armory/clouddrivers', 'read'],
      ['GET', '/armory/clouddrivers/gw-1', 'read'],
      ['GET', '/armory/clouddriversX', 'admin'],
      ['GET', '/armory/agent/operations', 'read'],
      ['GET', '/armory/agent/operations/op-1', 'read'],
      ['GET', '/armory/accounts', 'read'],
      ['GET', '/armory/accounts/prod-1', 'read'],
      ['GET', '/armory/agents', 'read'],
      ['GET', '/armory/agents/a-1', 'read'],
      ['POST', '/armory/agent/forwardedoperations', 'replica'],
      ['GET', '/armory/agent/forwardedoperations', 'admin'],
      ['POST', '/armory/agent/operations', 'replica'],
      ['POST', '/armory/agent/operationresults', 'replica'],
      ['POST', '/armory/accounts', 'admin'],
      ['PATCH', '/armory/accounts', 'admin'],
      ['PUT', '/armory/accounts/dynamic', 'admin'],
      ['DELETE', '/armory/accounts/prod-1', 'admin'],
      ['GET', '/anything/else', 'admin'],
      ['OPTIONS', '/armory/accounts', 'admin'],
    ];
    for (const [method, path, role] of table) assert.equal(restRequirement(method, path, GATEWAY_PATH_RULES), role, `${method} ${path}`);
  });
});
