/**
 * The identity mapping of kubectl through the gateway (docs/kubectl.md, "Identity mapping"): tokens, JWTs and
 * certificates to a prefixed Kubernetes user and groups; `system:` names refused when the prefixes are empty, also
 * behind the whitespace the cluster's HTTP parser trims; names an HTTP header cannot carry verbatim refused from every
 * source, a forwarded caller's included.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { principalFromRules } from '../../src/gateway/auth/principal.js';
import { kubeCallerOf, KubeIdentityError } from '../../src/gateway/kube/kube-identity.js';
import { kubeSchema } from '../../src/gateway/config/kube-schema.js';
import { KubeRefusal } from '../../src/gateway/kube/kube-status.js';

const defaults = kubeSchema.parse({});

test('token, JWT and certificate principals map to prefixed users and groups', () => {
  const token = principalFromRules('alice', 'token', [], undefined, {}, ['devs', 'devs', 'ops']);
  assert.deepEqual(kubeCallerOf(token, defaults), {
    principal: 'token:alice',
    principalGroups: ['devs', 'ops'],
    user: 'outpost:alice',
    groups: ['outpost:devs', 'outpost:ops'],
  });
  const jwt = principalFromRules('bob@example.com', 'jwt', [], undefined, {}, ['sre']);
  assert.deepEqual(kubeCallerOf(jwt, defaults), {
    principal: 'jwt:bob@example.com',
    principalGroups: ['sre'],
    user: 'outpost:bob@example.com',
    groups: ['outpost:sre'],
  });
  const cert = principalFromRules('CN=carol,O=team-a,O=team-b', 'certificate', [], undefined, { CN: ['carol'], O: ['team-a', 'team-b'] });
  assert.deepEqual(kubeCallerOf(cert, { userPrefix: 'x-', groupsPrefix: 'g-' }), {
    principal: 'certificate:CN=carol,O=team-a,O=team-b',
    principalGroups: ['team-a', 'team-b'],
    user: 'x-carol',
    groups: ['g-team-a', 'g-team-b'],
  });
  const person = principalFromRules('corp:dana@example.com', 'oidc', [], undefined, {}, ['corp:sre']);
  assert.deepEqual(kubeCallerOf(person, defaults), {
    principal: 'oidc:corp:dana@example.com',
    principalGroups: ['corp:sre'],
    user: 'outpost:corp:dana@example.com',
    groups: ['outpost:corp:sre'],
  });
});

test('with empty prefixes a system: name is refused', () => {
  const none = { userPrefix: '', groupsPrefix: '' };
  assert.throws(() => kubeCallerOf(principalFromRules('system:admin', 'token', []), none), KubeIdentityError);
  assert.throws(() => kubeCallerOf(principalFromRules('eve', 'token', [], undefined, {}, ['system:masters']), none), /system:masters/);
  assert.equal(kubeCallerOf(principalFromRules('eve', 'token', []), none).user, 'eve');
});

test('names the cluster would read differently are refused from every source, with or without prefixes', () => {
  const none = { userPrefix: '', groupsPrefix: '' };
  const token = (subject: string, groups: string[] = []) => principalFromRules(subject, 'token', [], undefined, {}, groups);
  const jwt = (subject: string, groups: string[] = []) => principalFromRules(subject, 'jwt', [], undefined, {}, groups);
  const cert = (cn: string, o: string[] = []) => principalFromRules(`CN=${cn}`, 'certificate', [], undefined, { CN: [cn], O: o });
  const hostile = [' system:masters', '\tsystem:masters', 'system:masters ', 'system:masters\t', 'devs\u0000', 'a\r\nb', 'd\u00e9vs', ''];
  for (const config of [none, defaults]) {
    for (const name of hostile) {
      const label = `${JSON.stringify(name)} with prefixes ${JSON.stringify(config.userPrefix)}`;
      if (name !== '') {
        assert.throws(() => kubeCallerOf(token(name), config), KubeIdentityError, `token subject ${label}`);
        assert.throws(() => kubeCallerOf(jwt(name), config), KubeIdentityError, `JWT subject ${label}`);
        assert.throws(() => kubeCallerOf(cert(name), config), KubeIdentityError, `certificate CN ${label}`);
      }
      assert.throws(() => kubeCallerOf(token('eve', [name]), config), KubeIdentityError, `token group ${label}`);
      assert.throws(() => kubeCallerOf(jwt('eve', [name]), config), KubeIdentityError, `JWT group ${label}`);
      assert.throws(() => kubeCallerOf(cert('eve', [name]), config), KubeIdentityError, `certificate O ${label}`);
    }
  }
  assert.throws(() => kubeCallerOf(token('eve', [' system:masters']), none), /starts or ends with whitespace/);
  assert.throws(() => kubeCallerOf(cert('system:node:x'), none), /reserved system: namespace/);
  // Kubernetes compares names byte for byte: `System:masters` is another, unprivileged group.
  assert.deepEqual(kubeCallerOf(token('eve', ['System:masters', 'dev ops']), none).groups, ['System:masters', 'dev ops']);
});

test("a forwarded caller is re-derived from its description with this replica's rules, then mapped here", async () => {
  const { principalFromDescription, describePrincipal } = await import('../../src/gateway/auth/vouched-principal.js');
  const { ruleSchema } = await import('../../src/gateway/config/security-schema.js');
  const { mayUseKube, hasRole } = await import('../../src/gateway/auth/principal.js');
  const here = [
    ruleSchema.parse({ kind: 'token', subject: '^alice$', roles: ['kube'], accounts: ['prod-*'] }),
    ruleSchema.parse({ kind: 'certificate', attributes: { O: 'sre' }, roles: ['kube'], accounts: ['*'] }),
  ];
  const elsewhere = [ruleSchema.parse({ kind: 'token', subject: '^alice$', roles: ['kube', 'admin'], accounts: ['*'] })];
  const alice = principalFromDescription(
    describePrincipal(principalFromRules('alice', 'token', elsewhere, undefined, {}, ['devs'])),
    here,
    false,
  );
  assert.equal(hasRole(alice, 'admin'), false, 'roles come from the rules here, never from the forwarding replica');
  assert.equal(mayUseKube(alice, 'prod-eu'), true);
  assert.equal(mayUseKube(alice, 'staging'), false);
  assert.deepEqual(kubeCallerOf(alice, defaults), {
    principal: 'token:alice',
    principalGroups: ['devs'],
    user: 'outpost:alice',
    groups: ['outpost:devs'],
  });
  const sre = principalFromDescription(
    describePrincipal(principalFromRules('CN=bob,O=sre', 'certificate', [], undefined, { CN: ['bob'], O: ['sre'] })),
    here,
    false,
  );
  assert.equal(mayUseKube(sre, 'anything'), true, 'certificate attributes travel and match here');
  const hostile = principalFromDescription({ method: 'token', subject: 'alice', groups: [' system:masters'] }, here, false);
  assert.throws(() => kubeCallerOf(hostile, { userPrefix: '', groupsPrefix: '' }), /starts or ends with whitespace/);
  const insecure = principalFromDescription({ method: 'insecure', subject: 'anonymous', groups: [] }, here, false);
  assert.equal(hasRole(insecure, 'kube'), false, 'an insecure caller gets no role from a secure replica');
});

test('the kube role reaches only the accounts its rule lists; a kube rule without accounts is a config error', async () => {
  const { mayUseKube } = await import('../../src/gateway/auth/principal.js');
  const { ruleSchema } = await import('../../src/gateway/config/security-schema.js');
  const rules = [ruleSchema.parse({ kind: 'token', subject: '^alice$', roles: ['kube'], accounts: ['prod-*'] })];
  const alice = principalFromRules('alice', 'token', rules);
  assert.equal(mayUseKube(alice, 'prod-eu'), true);
  assert.equal(mayUseKube(alice, 'staging'), false);
  const reader = principalFromRules('alice', 'token', [
    ruleSchema.parse({ kind: 'token', subject: '^alice$', roles: ['read', 'agent'], accounts: ['*'] }),
  ]);
  assert.equal(mayUseKube(reader, 'prod-eu'), false, 'accounts alone grant nothing without the role');
  const bad = ruleSchema.safeParse({ kind: 'token', subject: '^x$', roles: ['kube'] });
  assert.equal(bad.success, false);
  assert.match(JSON.stringify(bad.error?.issues), /the role kube reaches accounts/);
});

test("the authenticator takes groups from a static token's config and from a JWT's groups claim", async () => {
  const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { SignJWT } = await import('jose');
  const { createAuthenticator } = await import('../../src/gateway/auth/authenticator.js');
  const { loadGatewayConfig } = await import('../../src/gateway/config/load.js');
  const dir = mkdtempSync(join(tmpdir(), 'outpost-kube-groups-'));
  const secret = 'jwt-secret-kube-groups-0123456789-0123456789';
  try {
    writeFileSync(join(dir, 'jwt-secret'), secret);
    const config = loadGatewayConfig({
      env: {},
      overrides: {
        auth: {
          tokens: [{ subject: 'alice', token: 'alice-token-0123456789abcdef', groups: ['devs'] }],
          jwt: { issuer: 'https://issuer.test', audience: 'outpost', secretFile: join(dir, 'jwt-secret'), groupsClaim: 'teams' },
        },
      },
    });
    const authenticator = createAuthenticator(config);
    const token = await authenticator.authenticate({ secure: false, bearer: 'alice-token-0123456789abcdef' });
    assert.deepEqual(kubeCallerOf(token, defaults).groups, ['outpost:devs']);
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('https://issuer.test')
        .setAudience('outpost')
        .setSubject('bob')
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(new TextEncoder().encode(secret));
    const listed = await authenticator.authenticate({ secure: false, bearer: await sign({ teams: ['sre', 7, '', 'ops'] }) });
    assert.deepEqual(kubeCallerOf(listed, defaults), {
      principal: 'jwt:bob',
      principalGroups: ['sre', 'ops'],
      user: 'outpost:bob',
      groups: ['outpost:sre', 'outpost:ops'],
    });
    const single = await authenticator.authenticate({ secure: false, bearer: await sign({ teams: 'sre' }) });
    assert.deepEqual(kubeCallerOf(single, defaults).groups, ['outpost:sre']);
    const none = await authenticator.authenticate({ secure: false, bearer: await sign({ groups: ['ignored'] }) });
    assert.deepEqual(kubeCallerOf(none, defaults).groups, [], 'only the configured claim names groups');
    // A groups claim (or a subject) the cluster would trim into a system: name is refused, whatever the prefixes.
    const padded = await authenticator.authenticate({ secure: false, bearer: await sign({ teams: [' system:masters', 'sre'] }) });
    assert.throws(() => kubeCallerOf(padded, { userPrefix: '', groupsPrefix: '' }), /the jwt group " system:masters" starts or ends/);
    assert.throws(() => kubeCallerOf(padded, defaults), /starts or ends with whitespace/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the name mapped: a certificate's CN, its whole subject when it has none; a CN attribute counts for certificates only", async () => {
  const { insecurePrincipal } = await import('../../src/gateway/auth/principal.js');
  const noCn = principalFromRules('O=team-a,OU=ops', 'certificate', [], undefined, { O: ['team-a'], OU: ['ops'] });
  assert.deepEqual(kubeCallerOf(noCn, defaults), {
    principal: 'certificate:O=team-a,OU=ops',
    principalGroups: ['team-a'],
    user: 'outpost:O=team-a,OU=ops',
    groups: ['outpost:team-a'],
  });
  const bare = { subject: 'CN=erin', method: 'certificate', roles: new Set(), accounts: {} } as const;
  assert.equal(kubeCallerOf({ ...bare, roles: new Set() }, defaults).user, 'outpost:CN=erin', 'a certificate principal without attributes');
  const token = { ...principalFromRules('eve', 'token', [], undefined, {}, ['devs']), attributes: { CN: ['root'] } };
  assert.equal(kubeCallerOf(token, defaults).user, 'outpost:eve', "a token's subject, whatever attributes it carries");
  assert.deepEqual(kubeCallerOf(insecurePrincipal(), defaults), {
    principal: 'insecure:anonymous',
    principalGroups: [],
    user: 'outpost:anonymous',
    groups: [],
  });
});

test('a refusal names the source, the name (its first 100 characters) and the problem', () => {
  const none = { userPrefix: '', groupsPrefix: '' };
  const refusal = (f: () => unknown): string => {
    try {
      f();
    } catch (err) {
      assert.ok(err instanceof KubeIdentityError);
      assert.ok(err instanceof KubeRefusal, "the gateway's answer to the caller");
      assert.equal(err.status, 403);
      return err.message;
    }
    assert.fail('accepted');
  };
  assert.equal(
    refusal(() => kubeCallerOf(principalFromRules('a\r\nb', 'token', []), defaults)),
    'the token subject "a\\r\\nb" holds a control character: it cannot be impersonated',
  );
  assert.equal(
    refusal(() => kubeCallerOf(principalFromRules(`${'x'.repeat(150)} `, 'jwt', []), defaults)),
    `the jwt subject "${'x'.repeat(100)}" starts or ends with whitespace, which the cluster's HTTP parser trims: it cannot be impersonated`,
  );
  assert.equal(
    refusal(() => kubeCallerOf(principalFromRules('CN=d\u00e9', 'certificate', [], undefined, { CN: ['d\u00e9'] }), defaults)),
    'the certificate subject "d\u00e9" holds a character outside printable ASCII, which an HTTP header cannot carry verbatim: it cannot be impersonated',
  );
  assert.equal(
    refusal(() => kubeCallerOf(principalFromRules('CN=eve', 'certificate', [], undefined, { CN: ['eve'], O: [''] }), defaults)),
    'the certificate group "" is empty: it cannot be impersonated',
  );
  assert.equal(
    refusal(() => kubeCallerOf(principalFromRules('system:admin', 'token', []), none)),
    '"system:admin" is in the cluster\'s reserved system: namespace; set kube.userPrefix and kube.groupsPrefix',
  );
  // Every name is checked after its prefix too: a prefix the cluster would trim is refused, not sent.
  assert.equal(
    refusal(() => kubeCallerOf(principalFromRules('eve', 'token', []), { userPrefix: ' ', groupsPrefix: '' })),
    'the Kubernetes name " eve" starts or ends with whitespace, which the cluster\'s HTTP parser trims: it cannot be impersonated',
  );
  assert.equal(
    refusal(() => kubeCallerOf(principalFromRules('eve', 'token', [], undefined, {}, ['devs']), { userPrefix: 'u:', groupsPrefix: '\t' })),
    'the Kubernetes name "\\tdevs" holds a control character: it cannot be impersonated',
  );
});

test('the system: check covers the user and every group, each after its own prefix', () => {
  const eve = principalFromRules('system:eve', 'token', [], undefined, {}, ['devs', 'system:masters']);
  assert.throws(() => kubeCallerOf(eve, { userPrefix: 'u:', groupsPrefix: '' }), /^Error: "system:masters" is in/);
  assert.throws(
    () => kubeCallerOf(eve, { userPrefix: '', groupsPrefix: 'g:' }),
    (err: Error) => err.message.startsWith('"system:eve" is in'),
  );
  assert.deepEqual(kubeCallerOf(eve, { userPrefix: 'u:', groupsPrefix: 'g:' }), {
    principal: 'token:system:eve',
    principalGroups: ['devs', 'system:masters'],
    user: 'u:system:eve',
    groups: ['g:devs', 'g:system:masters'],
  });
});
