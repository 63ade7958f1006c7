/**
 * The identity mapping of kubectl through the gateway (docs/kubectl.md, "Identity mapping"): tokens, JWTs and
 * certificates to a prefixed Kubernetes user and groups; `system:` names refused when the prefixes are empty.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { principalFromRules } from '../../src/gateway/auth/principal.js';
import { kubeCallerOf, KubeIdentityError } from '../../src/gateway/kube/kube-identity.js';
import { kubeSchema } from '../../src/gateway/config/kube-schema.js';

const defaults = kubeSchema.parse({});

test('token, JWT and certificate principals map to prefixed users and groups', () => {
  const token = principalFromRules('alice', 'token', [], undefined, {}, ['devs', 'devs', 'ops']);
  assert.deepEqual(kubeCallerOf(token, defaults), {
    principal: 'token:alice',
    user: 'outpost:alice',
    groups: ['outpost:devs', 'outpost:ops'],
  });
  const jwt = principalFromRules('bob@example.com', 'jwt', [], undefined, {}, ['sre']);
  assert.deepEqual(kubeCallerOf(jwt, defaults), {
    principal: 'jwt:bob@example.com',
    user: 'outpost:bob@example.com',
    groups: ['outpost:sre'],
  });
  const cert = principalFromRules('CN=carol,O=team-a,O=team-b', 'certificate', [], undefined, { CN: ['carol'], O: ['team-a', 'team-b'] });
  assert.deepEqual(kubeCallerOf(cert, { userPrefix: 'x-', groupsPrefix: 'g-' }), {
    principal: 'certificate:CN=carol,O=team-a,O=team-b',
    user: 'x-carol',
    groups: ['g-team-a', 'g-team-b'],
  });
});

test('with empty prefixes a system: name is refused', () => {
  const none = { userPrefix: '', groupsPrefix: '' };
  assert.throws(() => kubeCallerOf(principalFromRules('system:admin', 'token', []), none), KubeIdentityError);
  assert.throws(() => kubeCallerOf(principalFromRules('eve', 'token', [], undefined, {}, ['system:masters']), none), /system:masters/);
  assert.equal(kubeCallerOf(principalFromRules('eve', 'token', []), none).user, 'eve');
});

test('the kube role reaches only the accounts its rule lists; a kube rule without accounts is a config error', async () => {
  const { mayUseKube } = await import('../../src/gateway/auth/principal.js');
  const { ruleSchema } = await import('../../src/gateway/config/security-schema.js');
  const rules = [ruleSchema.parse({ kind: 'token', subject: '^alice$', roles: ['kube'], accounts: ['prod-*'] })];
  const alice = principalFromRules('alice', 'token', rules);
  assert.equal(mayUseKube(alice, 'prod-eu'), true);
  assert.equal(mayUseKube(alice, 'staging'), false);
  const reader = principalFromRules('alice', 'token', [
    ruleSchema.parse({ kind: 'token', subject: '^alice$', roles: ['read'], accounts: ['*'] }),
  ]);
  assert.equal(mayUseKube(reader, 'prod-eu'), false, 'accounts alone grant nothing without the role');
  const bad = ruleSchema.safeParse({ kind: 'token', subject: '^x$', roles: ['kube'] });
  assert.equal(bad.success, false);
  assert.match(JSON.stringify(bad.error?.issues), /the kube role needs accounts/);
});
