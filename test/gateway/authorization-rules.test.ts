/**
 * The authorization rules, as plain functions (src/gateway/auth/authorization.ts, src/gateway/auth/principal.ts):
 * which role every Connect method and REST route needs, the admission step that checks it, and what a principal
 * built from `authorization.rules` holds — roles, account patterns, groups, its identity key — and may reach. These
 * decide every request of the gateway, so each rule is pinned here exactly, boundaries included, without a server.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Authenticator } from '../../src/gateway/auth/authenticator.js';
import { admit, connectRequirement, type PathRule, type Requirement, restRequirement } from '../../src/gateway/auth/authorization.js';
import type { RequestCredentials } from '../../src/gateway/auth/credentials.js';
import {
  hasRole,
  identityOf,
  insecurePrincipal,
  mayReach,
  mayRegister,
  mayUseKube,
  type Principal,
  principalFromRules,
} from '../../src/gateway/auth/principal.js';
import type { AuthorizationRule, Role } from '../../src/gateway/config/schema.js';

/** A principal with exactly these roles and account patterns. */
function principal(roles: Role[], accounts: Principal['accounts'] = {}): Principal {
  return { subject: 'someone', method: 'token', roles: new Set(roles), accounts };
}

describe('what each Connect method requires', () => {
  test('every listed service and method', () => {
    const table: [string, string, Requirement][] = [
      ['outpost.agent.v1.AgentService', 'Connect', 'agent'],
      ['outpost.api.v1.ObjectService', 'ListObjects', 'read'],
      ['outpost.api.v1.ObjectService', 'WatchObjects', 'read'],
      ['outpost.api.v1.OperationService', 'SubmitOperation', 'write'],
      ['outpost.api.v1.OperationService', 'GetOperation', 'read'],
      ['outpost.api.v1.AccountService', 'ListAccounts', 'read'],
      ['outpost.api.v1.AccountService', 'GetAccount', 'read'],
      ['outpost.api.v1.AccountService', 'ListAgents', 'read'],
      ['outpost.api.v1.FleetService', 'GetFleet', 'read'],
      ['outpost.api.v1.MetricsService', 'GetHistory', 'read'],
      ['grpc.health.v1.Health', 'Check', 'none'],
      ['grpc.health.v1.Health', 'Watch', 'none'],
      ['grpc.reflection.v1.ServerReflection', 'ServerReflectionInfo', 'read'],
      ['grpc.reflection.v1alpha.ServerReflection', 'ServerReflectionInfo', 'read'],
    ];
    for (const [service, method, requirement] of table) {
      assert.equal(connectRequirement(service, method), requirement, `${service}/${method}`);
    }
  });

  test('whatever is not listed requires admin: other methods, the audit service, unknown services', () => {
    for (const [service, method] of [
      ['outpost.agent.v1.AgentService', 'Other'],
      ['outpost.api.v1.AccountService', 'CreateAccounts'],
      ['outpost.api.v1.AccountService', 'DeleteAccounts'],
      ['outpost.api.v1.AuditService', 'ListAuditEvents'],
      ['grpc.health.v1.Health', 'List'],
      ['some.Unknown', 'Connect'],
      ['', ''],
    ]) {
      assert.equal(connectRequirement(service!, method!), 'admin', `${service}/${method}`);
    }
  });

  test('a name like a member of every object finds no entry: admin, never the member itself', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      assert.equal(connectRequirement('outpost.api.v1.AccountService', name), 'admin', name);
      assert.equal(connectRequirement('outpost.api.v1.ObjectService', name), 'read', name);
      assert.equal(connectRequirement(name, 'name'), 'admin', name);
      assert.equal(connectRequirement(name, '*'), 'admin', name);
    }
  });
});

describe('what each REST route requires (core table)', () => {
  test('reads: GET and HEAD of the read prefixes, the prefix itself and below it, trailing slashes ignored', () => {
    for (const prefix of ['/metrics', '/armory/clouddrivers', '/armory/agent/operations', '/armory/accounts', '/armory/agents']) {
      for (const method of ['GET', 'HEAD', 'get', 'head']) {
        for (const path of [prefix, `${prefix}/`, `${prefix}//`, `${prefix}/x`, `${prefix}/x/y/`]) {
          assert.equal(restRequirement(method, path), 'read', `${method} ${path}`);
        }
      }
      assert.equal(restRequirement('GET', `${prefix}x`), 'admin', `a longer name is another route: ${prefix}x`);
      assert.equal(restRequirement('GET', `/x${prefix}`), 'admin', `under another path: /x${prefix}`);
      assert.equal(restRequirement('GET', prefix.slice(0, -1)), 'admin', `a shorter name: ${prefix.slice(0, -1)}`);
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
        const expected = method === 'POST' && prefix === '/armory/agent/operations' ? 'replica' : 'admin';
        assert.equal(restRequirement(method, prefix), expected, `${method} ${prefix}`);
      }
    }
  });

  test('GET and HEAD /health need nothing; no other method, no other path', () => {
    for (const [method, path] of [
      ['GET', '/health'],
      ['HEAD', '/health'],
      ['get', '/health/'],
      ['GET', '/health///'],
    ]) {
      assert.equal(restRequirement(method!, path!), 'none', `${method} ${path}`);
    }
    for (const [method, path] of [
      ['POST', '/health'],
      ['DELETE', '/health'],
      ['GET', '/health/x'],
      ['GET', '/healthz'],
      ['GET', 'health'],
      ['GET', '/x/health'],
    ]) {
      assert.equal(restRequirement(method!, path!), 'admin', `${method} ${path}`);
    }
  });

  test('the replica routes: POST only, exactly these paths', () => {
    for (const path of [
      '/armory/agent/forwardedoperations',
      '/armory/agent/forwardedreads',
      '/armory/agent/operationresults',
      '/armory/agent/operations',
    ]) {
      assert.equal(restRequirement('POST', path), 'replica', path);
      assert.equal(restRequirement('post', `${path}/`), 'replica', `${path}/`);
      assert.equal(restRequirement('PUT', path), 'admin', `PUT ${path}`);
      assert.equal(restRequirement('POST', `${path}/x`), 'admin', `${path}/x`);
    }
    assert.equal(restRequirement('GET', '/armory/agent/forwardedoperations'), 'admin');
    assert.equal(restRequirement('GET', '/armory/agent/operationresults'), 'admin');
    assert.equal(restRequirement('POST', '/armory/agent'), 'admin');
  });

  test('anything else requires admin, the root and the empty path included', () => {
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', ''],
      ['GET', '//'],
      ['POST', '/'],
      ['GET', '/anything/else'],
      ['POST', '/armory/accounts'],
      ['DELETE', '/armory/accounts/prod'],
      ['GET', '/armory'],
    ]) {
      assert.equal(restRequirement(method!, path!), 'admin', `${method} '${path}'`);
    }
  });
});

describe("features' path rules", () => {
  const seen: string[] = [];
  const rule = (name: string, requirement: Requirement, matches: (path: string) => boolean, methods?: string[]): PathRule => ({
    name,
    requirement,
    methods,
    matches: (path) => {
      seen.push(`${name} ${path}`);
      return matches(path);
    },
  });
  const rules = [
    rule('kube', 'kube', (p) => p.startsWith('/k8s/')),
    rule('ops', 'spinnaker', (p) => p === '/ops', ['POST']),
    rule('web', 'none', (p) => p === '/' || p === '/assets/app.js/', ['GET', 'HEAD']),
    rule('all', 'spinnaker', (p) => p.startsWith('/cache')),
  ];

  test('the first rule that matches decides, for its methods only; upper case or not', () => {
    assert.equal(restRequirement('DELETE', '/k8s/prod/api/v1/pods', rules), 'kube');
    assert.equal(restRequirement('POST', '/ops', rules), 'spinnaker');
    assert.equal(restRequirement('post', '/ops', rules), 'spinnaker');
    assert.equal(restRequirement('GET', '/ops', rules), 'admin', 'a method the rule does not list: the core table');
    assert.equal(restRequirement('GET', '/', rules), 'none');
    assert.equal(restRequirement('head', '/', rules), 'none');
    assert.equal(restRequirement('POST', '/', rules), 'admin');
    assert.equal(restRequirement('GET', '/cache/x', rules), 'spinnaker');
  });

  test('a rule sees the path as requested, trailing slash kept; unmatched paths fall to the core table', () => {
    assert.equal(restRequirement('GET', '/assets/app.js/', rules), 'none');
    assert.equal(restRequirement('GET', '/assets/app.js', rules), 'admin');
    assert.equal(restRequirement('GET', '/metrics/', rules), 'read');
    assert.equal(restRequirement('GET', '/health', rules), 'none');
    assert.equal(restRequirement('POST', '/armory/agent/operations', rules), 'replica');
    seen.length = 0;
    restRequirement('GET', '/k8s/a/', rules);
    assert.deepEqual(seen, ['kube /k8s/a/']);
    seen.length = 0;
    restRequirement('PUT', '/x/', rules);
    assert.deepEqual(seen, ['kube /x/', 'all /x/'], 'rules whose methods differ are not even asked');
  });
});

/** An authenticator that records what it was asked and answers `answer` (or throws it). */
function fakeAuthenticator(answer: Principal | Error, readAccess: Authenticator['readAccess'] = 'authenticated') {
  const calls: { credentials: RequestCredentials; options: unknown }[] = [];
  const authenticator: Authenticator = {
    readAccess,
    async authenticate(credentials, options) {
      calls.push({ credentials, options });
      if (answer instanceof Error) throw answer;
      return answer;
    },
    vouched: () => assert.fail('not used'),
    useSessions: () => assert.fail('not used'),
    close: () => {},
  };
  return { authenticator, calls };
}

describe('admission', () => {
  const credentials: RequestCredentials = { secure: false, bearer: 'tok' };

  test('a requirement of none authenticates nothing and admits without a principal', async () => {
    const { authenticator, calls } = fakeAuthenticator(new ConnectError('bad token', Code.Unauthenticated));
    assert.equal(await admit(authenticator, credentials, 'none', 'GET /health'), undefined);
    assert.equal(calls.length, 0);
  });

  test('the principal holding the role is admitted, authenticated without anonymous access', async () => {
    const writer = principal(['read', 'write'], { write: ['*'] });
    const { authenticator, calls } = fakeAuthenticator(writer);
    assert.equal(await admit(authenticator, credentials, 'write', 'x'), writer);
    assert.equal(await admit(authenticator, credentials, 'read', 'x'), writer);
    assert.deepEqual(calls, [
      { credentials, options: {} },
      { credentials, options: {} },
    ]);
  });

  test('a principal without the role is refused PERMISSION_DENIED naming the subject, the role and what needed it', async () => {
    const { authenticator } = fakeAuthenticator(principal(['read']));
    await assert.rejects(admit(authenticator, credentials, 'admin', 'outpost.api.v1.AuditService/ListAuditEvents'), (err) => {
      assert.ok(err instanceof ConnectError);
      assert.equal(err.code, Code.PermissionDenied);
      assert.equal(err.rawMessage, 'someone lacks the role "admin" required for outpost.api.v1.AuditService/ListAuditEvents');
      return true;
    });
    await assert.rejects(admit(fakeAuthenticator(principal([])).authenticator, credentials, 'read', 'GET /metrics'), {
      code: Code.PermissionDenied,
      rawMessage: 'someone lacks the role "read" required for GET /metrics',
    });
  });

  test("the authenticator's refusal is passed on as it is", async () => {
    const refusal = new ConnectError('bearer token not recognized', Code.Unauthenticated);
    await assert.rejects(admit(fakeAuthenticator(refusal).authenticator, credentials, 'read', 'x'), (err) => err === refusal);
  });

  test('readAccess open: read admits anyone authenticated, asking for anonymous read; other roles still checked', async () => {
    const nobody = principal([]);
    const { authenticator, calls } = fakeAuthenticator(nobody, 'open');
    assert.equal(await admit(authenticator, credentials, 'read', 'GET /armory/accounts'), nobody);
    assert.deepEqual(calls, [{ credentials, options: { anonymousRoles: ['read'] } }]);
    await assert.rejects(admit(authenticator, credentials, 'write', 'SubmitOperation'), { code: Code.PermissionDenied });
    await assert.rejects(admit(authenticator, credentials, 'admin', 'x'), { code: Code.PermissionDenied });
    assert.deepEqual(calls[1]!.options, {}, 'no anonymous access beyond reads');
  });

  test('readAccess authenticated: read needs the role', async () => {
    const { authenticator, calls } = fakeAuthenticator(principal(['write']), 'authenticated');
    await assert.rejects(admit(authenticator, credentials, 'read', 'x'), { code: Code.PermissionDenied });
    assert.deepEqual(calls[0]!.options, {});
  });
});

describe('principals from the rules', () => {
  const rules: AuthorizationRule[] = [
    { kind: 'token', subject: '^agent-', roles: ['agent'], accounts: ['team-a-*'] },
    { kind: 'token', subject: '^agent-a$', roles: ['agent', 'read'], accounts: ['shared-*'] },
    { kind: 'jwt', subject: '^agent-a$', roles: ['admin'], accounts: [] },
    { kind: 'token', groups: ['ops', 'sre-.*'], roles: ['kube', 'read'], accounts: ['prod'] },
    { kind: 'certificate', attributes: { O: 'agents' }, roles: ['agent'], accounts: ['edge-*'] },
    { kind: 'certificate', subject: '^CN=admin-', roles: ['admin'], accounts: [] },
  ];

  test('every rule of the kind whose subject matches adds its roles and account patterns', () => {
    assert.deepEqual(principalFromRules('agent-a', 'token', rules), {
      subject: 'agent-a',
      method: 'token',
      roles: new Set(['agent', 'read']),
      accounts: { agent: ['team-a-*', 'shared-*'] },
      groups: [],
      attributes: undefined,
      expiresAt: undefined,
    });
    const other = principalFromRules('agent-b', 'token', rules, 1234);
    assert.deepEqual(other.roles, new Set(['agent']));
    assert.deepEqual(other.accounts, { agent: ['team-a-*'] });
    assert.equal(other.expiresAt, 1234);
  });

  test('kinds are separate namespaces; a subject no rule matches gets no rights', () => {
    const jwt = principalFromRules('agent-a', 'jwt', rules);
    assert.deepEqual(jwt.roles, new Set(['admin']));
    assert.deepEqual(jwt.accounts, {}, 'admin reaches every account without patterns');
    const none = principalFromRules('stranger', 'token', rules);
    assert.deepEqual(none.roles, new Set());
    assert.deepEqual(none.accounts, {});
    assert.deepEqual(principalFromRules('agent-a', 'oidc', rules).roles, new Set());
  });

  test("groups: the rule applies when one of the credential's groups matches one of its anchored patterns", () => {
    for (const groups of [['ops'], ['sre-eu'], ['dev', 'ops'], ['ops', 'dev']]) {
      const p = principalFromRules('someone', 'token', rules, undefined, {}, groups);
      assert.deepEqual(p.roles, new Set(['kube', 'read']), groups.join());
      assert.deepEqual(p.accounts, { kube: ['prod'] }, 'read takes no account patterns');
      assert.deepEqual(p.groups, groups);
    }
    for (const groups of [[], ['devops'], ['opsx'], ['sre'], ['x-sre-eu'], ['dev']]) {
      assert.deepEqual(principalFromRules('someone', 'token', rules, undefined, {}, groups).roles, new Set(), groups.join());
    }
  });

  test('groups are kept once each, in order', () => {
    assert.deepEqual(principalFromRules('x', 'token', [], undefined, {}, ['b', 'a', 'b']).groups, ['b', 'a']);
  });

  test("certificates: attributes are kept and their O values count as groups; other kinds' attributes do not", () => {
    const attributes = { CN: ['edge-1'], O: ['agents', 'ops'] };
    const cert = principalFromRules('CN=edge-1,O=agents,O=ops', 'certificate', rules, undefined, attributes, ['ops']);
    assert.deepEqual(cert, {
      subject: 'CN=edge-1,O=agents,O=ops',
      method: 'certificate',
      roles: new Set(['agent']),
      accounts: { agent: ['edge-*'] },
      groups: ['ops', 'agents'],
      attributes,
      expiresAt: undefined,
    });
    const noO = principalFromRules('CN=admin-1', 'certificate', rules, undefined, { CN: ['admin-1'] });
    assert.deepEqual(noO.roles, new Set(['admin']));
    assert.deepEqual(noO.groups, []);
    assert.deepEqual(noO.attributes, { CN: ['admin-1'] });
    const token = principalFromRules('someone', 'token', rules, undefined, { O: ['ops'] });
    assert.deepEqual(token.groups, [], "a token's attributes are no groups");
    assert.deepEqual(token.roles, new Set());
    assert.equal(token.attributes, undefined);
    assert.deepEqual(principalFromRules('CN=x', 'certificate', rules).attributes, {}, 'no attributes given: none');
  });

  test('insecure mode: every role, every account name, anonymous unless named', () => {
    const p = insecurePrincipal();
    assert.deepEqual(p, {
      subject: 'anonymous',
      method: 'insecure',
      roles: new Set(['agent', 'read', 'write', 'admin', 'replica', 'spinnaker', 'kube']),
      accounts: { agent: ['*'], write: ['*'], kube: ['*'], spinnaker: ['*'] },
    });
    assert.equal(insecurePrincipal('dev').subject, 'dev');
    assert.equal(identityOf(p), 'insecure:anonymous');
  });

  test('the identity key is the method and the subject', () => {
    assert.equal(identityOf({ method: 'token', subject: 'agent-a' }), 'token:agent-a');
    assert.equal(identityOf({ method: 'certificate', subject: 'CN=a,O=b' }), 'certificate:CN=a,O=b');
  });
});

describe('roles and reach', () => {
  test('hasRole: the role itself, never without a principal', () => {
    assert.equal(hasRole(principal(['read']), 'read'), true);
    assert.equal(hasRole(principal(['read']), 'write'), false);
    assert.equal(hasRole(undefined, 'read'), false);
  });

  test('an account-scoped role reaches the accounts one of its patterns matches', () => {
    const p = principal(['agent', 'kube', 'write', 'spinnaker'], {
      agent: ['team-a-*', 'shared'],
      kube: ['prod-*-eu'],
      write: ['*'],
      spinnaker: ['deploy*'],
    });
    assert.equal(mayReach(p, 'agent', 'team-a-1'), true);
    assert.equal(mayReach(p, 'agent', 'team-a-'), true, '* matches nothing too');
    assert.equal(mayReach(p, 'agent', 'shared'), true, 'the second pattern');
    assert.equal(mayReach(p, 'agent', 'shared-1'), false, 'a pattern without * matches only itself');
    assert.equal(mayReach(p, 'agent', 'xshared'), false);
    assert.equal(mayReach(p, 'agent', 'team-b-1'), false);
    assert.equal(mayReach(p, 'agent', 'my-team-a-1'), false, 'anchored at the start');
    assert.equal(mayReach(p, 'kube', 'prod-1-eu'), true);
    assert.equal(mayReach(p, 'kube', 'prod--eu'), true);
    assert.equal(mayReach(p, 'kube', 'prod-1-eu-2'), false, 'anchored at the end');
    assert.equal(mayReach(p, 'kube', 'prod-1-us'), false);
    assert.equal(mayReach(p, 'write', 'anything'), true);
    assert.equal(mayReach(p, 'write', ''), true);
    assert.equal(mayReach(p, 'spinnaker', 'deployments'), true);
    assert.equal(mayReach(p, 'spinnaker', 'redeploy'), false);
  });

  test('pattern characters other than * match only themselves', () => {
    const cases: [string, string, boolean][] = [
      ['a.b', 'a.b', true],
      ['a.b', 'axb', false],
      ['a+b', 'a+b', true],
      ['a+b', 'aab', false],
      ['ab?', 'ab?', true],
      ['ab?', 'a', false],
      ['a^b', 'a^b', true],
      ['a$b', 'a$b', true],
      ['a{2}', 'a{2}', true],
      ['a{2}', 'aa', false],
      ['a{2', 'a{2', true],
      ['a}', 'a}', true],
      ['(a)', '(a)', true],
      ['(a)', 'a', false],
      ['a)', 'a)', true],
      ['(a', '(a', true],
      ['a|b', 'a|b', true],
      ['a|b', 'a', false],
      ['[ab]', '[ab]', true],
      ['[ab]', 'a', false],
      ['a]', 'a]', true],
      ['[a', '[a', true],
      ['a\\d', 'a\\d', true],
      ['a\\d', 'a1', false],
      ['a\\', 'a\\', true],
      ['prod', 'prod', true],
      ['prod', 'pxrxoxd', false],
      ['d*s', 'ds', true],
      ['d*s', 'dots', true],
      ['*-*', 'a-b', true],
      ['*-*', 'ab', false],
    ];
    for (const [pattern, account, expected] of cases) {
      assert.equal(mayReach(principal(['kube'], { kube: [pattern] }), 'kube', account), expected, `${pattern} ~ ${account}`);
    }
  });

  test('no reach without the role, without patterns for it, or without a principal', () => {
    assert.equal(mayReach(principal([], { kube: ['*'] }), 'kube', 'prod'), false, 'patterns without the role');
    assert.equal(mayReach(principal(['kube'], {}), 'kube', 'prod'), false, 'the role without patterns');
    assert.equal(mayReach(principal(['kube'], { kube: [] }), 'kube', 'prod'), false, 'an empty list');
    assert.equal(mayReach(principal(['kube'], { agent: ['*'] }), 'kube', 'prod'), false, "another role's patterns");
    assert.equal(mayReach(undefined, 'kube', 'prod'), false);
  });

  test('mayRegister is the agent role, mayUseKube the kube role', () => {
    const agent = principal(['agent'], { agent: ['a-*'] });
    const kube = principal(['kube'], { kube: ['a-*'] });
    assert.equal(mayRegister(agent, 'a-1'), true);
    assert.equal(mayRegister(kube, 'a-1'), false);
    assert.equal(mayRegister(agent, 'b-1'), false);
    assert.equal(mayUseKube(kube, 'a-1'), true);
    assert.equal(mayUseKube(agent, 'a-1'), false);
    assert.equal(mayUseKube(kube, 'b-1'), false);
    assert.equal(mayUseKube(undefined, 'a-1'), false);
    assert.equal(mayRegister(undefined, 'a-1'), false);
  });
});
