/**
 * The principal one replica vouches for when it forwards a kubectl request to another (src/gateway/auth/vouched-principal.ts):
 * what the description carries, its header encoding, the decoder that refuses anything not well formed, and the
 * principal the receiving replica re-derives from its OWN rules. A forwarded request is admitted again from this
 * description alone, so every field check of the decoder and every rule of the re-derivation is pinned here.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Principal } from '../../src/gateway/auth/principal.js';
import {
  decodeDescription,
  describePrincipal,
  encodeDescription,
  type PrincipalDescription,
  principalFromDescription,
} from '../../src/gateway/auth/vouched-principal.js';
import type { AuthorizationRule } from '../../src/gateway/config/schema.js';

/** base64url of a JSON value, as a forwarding replica would send it. */
function header(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('describing a principal', () => {
  test('carries method, subject and groups, and no attributes when the principal has none', () => {
    const p: Principal = { subject: 'alice', method: 'token', roles: new Set(['admin']), accounts: { kube: ['*'] }, groups: ['ops'] };
    const d = describePrincipal(p);
    assert.deepEqual(d, { method: 'token', subject: 'alice', groups: ['ops'] });
    assert.equal('attributes' in d, false);
  });

  test('a principal without groups is described with an empty list', () => {
    const d = describePrincipal({ subject: 'bob', method: 'jwt', roles: new Set(), accounts: {} });
    assert.deepEqual(d.groups, []);
  });

  test('copies groups and certificate attributes, so changing the description leaves the principal alone', () => {
    const groups = ['g1'];
    const attributes = { O: ['org'], OU: ['unit-a', 'unit-b'] };
    const p: Principal = { subject: 'CN=x', method: 'certificate', roles: new Set(), accounts: {}, groups, attributes };
    const d = describePrincipal(p);
    assert.deepEqual(d, { method: 'certificate', subject: 'CN=x', groups: ['g1'], attributes: { O: ['org'], OU: ['unit-a', 'unit-b'] } });
    d.groups.push('more');
    d.attributes?.O?.push('more');
    assert.deepEqual(groups, ['g1']);
    assert.deepEqual(attributes.O, ['org']);
  });
});

describe('the header encoding', () => {
  test('is base64url of the JSON description', () => {
    const d: PrincipalDescription = { method: 'token', subject: 'a?>', groups: ['~~~'] };
    const encoded = encodeDescription(d);
    assert.equal(encoded, Buffer.from('{"method":"token","subject":"a?>","groups":["~~~"]}').toString('base64url'));
    assert.match(encoded, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeDescription(encoded), d);
  });

  test('round-trips every method a replica may vouch for', () => {
    for (const method of ['insecure', 'token', 'jwt', 'oidc', 'certificate', 'replica', 'anonymous'] as const) {
      const d: PrincipalDescription = { method, subject: 's', groups: [] };
      assert.deepEqual(decodeDescription(encodeDescription(d)), d, method);
    }
  });

  test('keeps certificate attributes, and an empty attribute map', () => {
    const d: PrincipalDescription = { method: 'certificate', subject: 'CN=a', groups: ['x'], attributes: { O: ['x'], CN: ['a'] } };
    assert.deepEqual(decodeDescription(encodeDescription(d)), d);
    assert.deepEqual(decodeDescription(header({ method: 'certificate', subject: 'CN=a', groups: [], attributes: {} })), {
      method: 'certificate',
      subject: 'CN=a',
      groups: [],
      attributes: {},
    });
  });

  test('drops fields it does not know', () => {
    const decoded = decodeDescription(header({ method: 'token', subject: 's', groups: [], roles: ['admin'], accounts: { kube: ['*'] } }));
    assert.deepEqual(decoded, { method: 'token', subject: 's', groups: [] });
    assert.equal(decoded !== undefined && 'attributes' in decoded, false);
  });
});

describe('refusing a malformed description', () => {
  const good = { method: 'token', subject: 's', groups: ['g'] };

  test('no header, or the header repeated', () => {
    assert.equal(decodeDescription(undefined), undefined);
    assert.equal(decodeDescription([header(good)]), undefined);
    assert.equal(decodeDescription([header(good), header(good)]), undefined);
    // a list whose items, read as byte values, spell a good description
    const bytes = [...Buffer.from(JSON.stringify(good))].map(String);
    assert.equal(decodeDescription(bytes), undefined);
  });

  test('not JSON, or JSON that is not an object', () => {
    assert.equal(decodeDescription(Buffer.from('{not json').toString('base64url')), undefined);
    assert.equal(decodeDescription(''), undefined);
    assert.equal(decodeDescription(header(null)), undefined);
    assert.equal(decodeDescription(header('token')), undefined);
  });

  test('a missing, unknown or non-string method', () => {
    assert.equal(decodeDescription(header({ ...good, method: undefined })), undefined);
    assert.equal(decodeDescription(header({ ...good, method: 'admin' })), undefined);
    assert.equal(decodeDescription(header({ ...good, method: '' })), undefined);
    assert.equal(decodeDescription(header({ ...good, method: ['token'] })), undefined);
    assert.equal(decodeDescription(header({ ...good, method: 'toString' })), undefined);
  });

  test('a missing, empty or non-string subject', () => {
    assert.equal(decodeDescription(header({ ...good, subject: undefined })), undefined);
    assert.equal(decodeDescription(header({ ...good, subject: '' })), undefined);
    assert.equal(decodeDescription(header({ ...good, subject: 7 })), undefined);
    assert.equal(decodeDescription(header({ ...good, subject: ['s'] })), undefined);
  });

  test('groups that are missing, not a list, or hold a non-string', () => {
    assert.equal(decodeDescription(header({ ...good, groups: undefined })), undefined);
    assert.equal(decodeDescription(header({ ...good, groups: 'g' })), undefined);
    assert.equal(decodeDescription(header({ ...good, groups: { 0: 'g', length: 1 } })), undefined);
    assert.equal(decodeDescription(header({ ...good, groups: ['g', 1] })), undefined);
    assert.equal(decodeDescription(header({ ...good, groups: [1, 'g'] })), undefined);
  });

  test('attributes that are not a map of string lists', () => {
    assert.equal(decodeDescription(header({ ...good, attributes: null })), undefined);
    assert.equal(decodeDescription(header({ ...good, attributes: 'O=x' })), undefined);
    assert.equal(decodeDescription(header({ ...good, attributes: 1 })), undefined);
    assert.equal(decodeDescription(header({ ...good, attributes: { O: 'x' } })), undefined);
    assert.equal(decodeDescription(header({ ...good, attributes: { O: ['x'], OU: [1] } })), undefined);
    assert.equal(decodeDescription(header({ ...good, attributes: { O: [1], OU: ['x'] } })), undefined);
  });
});

describe('the principal on the receiving replica', () => {
  const rules: AuthorizationRule[] = [
    { kind: 'token', subject: '^alice$', roles: ['kube'], accounts: ['team-*'] },
    { kind: 'token', groups: ['ops'], roles: ['read'], accounts: ['prod'] },
    { kind: 'oidc', subject: '^google:carol$', roles: ['kube'], accounts: ['oidc-*'] },
    { kind: 'certificate', attributes: { O: 'agents' }, roles: ['agent'], accounts: ['edge-*'] },
    { kind: 'jwt', subject: '^alice$', roles: ['admin'], accounts: [] },
  ] as AuthorizationRule[];

  test('roles and accounts come from this replica’s rules of the description’s kind', () => {
    const p = principalFromDescription({ method: 'token', subject: 'alice', groups: ['ops'] }, rules, false);
    assert.equal(p.method, 'token');
    assert.equal(p.subject, 'alice');
    assert.deepEqual([...p.roles].sort(), ['kube', 'read']);
    assert.deepEqual(p.accounts, { kube: ['team-*'] });
    assert.deepEqual(p.groups, ['ops']);
    assert.equal(p.attributes, undefined);
  });

  test('an OIDC caller is matched against the OIDC rules', () => {
    const p = principalFromDescription({ method: 'oidc', subject: 'google:carol', groups: [] }, rules, false);
    assert.deepEqual([...p.roles], ['kube']);
    assert.deepEqual(p.accounts, { kube: ['oidc-*'] });
  });

  test('certificate attributes are matched for a certificate, and O values count as groups', () => {
    const p = principalFromDescription({ method: 'certificate', subject: 'CN=a', groups: [], attributes: { O: ['agents'] } }, rules, false);
    assert.deepEqual([...p.roles], ['agent']);
    assert.deepEqual(p.attributes, { O: ['agents'] });
    assert.deepEqual(p.groups, ['agents']);
  });

  test('a certificate without attributes matches no attribute rule', () => {
    const p = principalFromDescription({ method: 'certificate', subject: 'CN=a', groups: [] }, rules, false);
    assert.equal(p.roles.size, 0);
    assert.deepEqual(p.attributes, {});
  });

  test('attributes sent with another method are ignored', () => {
    const ruleForAnyAttr = [
      { kind: 'token', attributes: { O: 'agents' }, roles: ['admin'], accounts: [] },
    ] as unknown as AuthorizationRule[];
    const p = principalFromDescription({ method: 'token', subject: 'x', groups: [], attributes: { O: ['agents'] } }, ruleForAnyAttr, false);
    assert.equal(p.roles.size, 0);
    assert.equal(p.attributes, undefined);
  });

  test('an insecure caller gets every role only when this replica is insecure too', () => {
    const d: PrincipalDescription = { method: 'insecure', subject: 'someone', groups: [] };
    const open = principalFromDescription(d, rules, true);
    assert.equal(open.method, 'insecure');
    assert.equal(open.subject, 'someone');
    assert.equal(open.roles.has('admin'), true);
    const closed = principalFromDescription(d, rules, false);
    assert.equal(closed.method, 'insecure');
    assert.equal(closed.roles.size, 0);
  });

  test('a secure caller stays bound by the rules on an insecure replica', () => {
    const p = principalFromDescription({ method: 'token', subject: 'nobody', groups: [] }, rules, true);
    assert.equal(p.method, 'token');
    assert.equal(p.roles.size, 0);
  });

  test('a replica or anonymous caller matches no rule', () => {
    for (const method of ['replica', 'anonymous'] as const) {
      assert.equal(principalFromDescription({ method, subject: 'alice', groups: ['ops'] }, rules, false).roles.size, 0);
    }
  });
});
