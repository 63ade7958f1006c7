/**
 * A client certificate's subject as the gateway reads it: Node's parsed subject normalised to attribute lists, written
 * as an RFC 4514 string whose every special character is escaped (so a CN of `a,O=admins` can never read as an
 * `O=admins` attribute), in a fixed attribute order, and the matchers of subject filters and certificate rules
 * (an unanchored regex over that string, anchored regexes over the parsed values). The unit side of
 * test/gateway/auth-certificate-subject.test.ts, without TLS connections.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSubjectMatcher, formatSubjectAttributes, subjectAttributes } from '../../src/gateway/auth/certificate-subject.js';

test("Node's subject becomes lists of values, unset attributes left out", () => {
  assert.deepEqual(subjectAttributes({ CN: 'agent-1', OU: ['a', 'b'], O: undefined }), { CN: ['agent-1'], OU: ['a', 'b'] });
  assert.deepEqual(subjectAttributes({}), {});
});

test('the subject is written CN first, then OU, O, L, ST, C, then any other attribute alphabetically', () => {
  const attributes = { UID: ['u'], C: ['DE'], DC: ['d'], ST: ['Bayern'], L: ['Munich'], O: ['Org'], OU: ['Unit'], CN: ['name'] };
  assert.equal(formatSubjectAttributes(attributes), 'CN=name,OU=Unit,O=Org,L=Munich,ST=Bayern,C=DE,DC=d,UID=u');
  assert.equal(formatSubjectAttributes({ B: ['b'], A: ['a'], CN: ['c'] }), 'CN=c,A=a,B=b');
  assert.equal(formatSubjectAttributes({ C: ['c'], A: ['a'] }), 'C=c,A=a');
  assert.equal(formatSubjectAttributes({ O: ['x', 'y'], CN: ['c'] }), 'CN=c,O=x,O=y');
  assert.equal(formatSubjectAttributes({ CN: ['c'], OU: ['u'] }), 'CN=c,OU=u');
  assert.equal(formatSubjectAttributes({ CN: ['c'], C: ['DE'], O: ['o'] }), 'CN=c,O=o,C=DE');
  assert.equal(formatSubjectAttributes({}), '');
});

test('every character RFC 4514 reserves is escaped, so a value never looks like another attribute', () => {
  const format = (value: string) => formatSubjectAttributes({ CN: [value] });
  assert.equal(format('a,O=admins'), 'CN=a\\,O=admins');
  assert.equal(format('a,b+c"d\\e<f>g;h'), 'CN=a\\,b\\+c\\"d\\\\e\\<f\\>g\\;h');
  assert.equal(format(',,'), 'CN=\\,\\,');
  assert.equal(format('#x#'), 'CN=\\#x#');
  assert.equal(format(' x y'), 'CN=\\ x y');
  assert.equal(format('\tx'), 'CN=\\\tx');
  assert.equal(format('x y '), 'CN=x y\\ ');
  assert.equal(format('  '), 'CN=\\ \\ ');
  assert.equal(format(' '), 'CN=\\ ');
  assert.equal(format('\t'), 'CN=\\\t');
  assert.equal(format('#'), 'CN=\\#');
  assert.equal(format('a\0b'), 'CN=a\\00b');
  assert.equal(format('plain-name.example'), 'CN=plain-name.example');
});

test('a subject regex is matched unanchored over the escaped string', () => {
  const matches = createSubjectMatcher({ subject: 'O=agents' });
  assert.equal(matches('CN=a,O=agents', { CN: ['a'], O: ['agents'] }), true);
  assert.equal(matches('CN=a,O=others', { CN: ['a'], O: ['agents'] }), false);
  assert.equal(matches('CN=a\\,O=agents', { CN: ['a,O=agents'] }), true);
  assert.equal(createSubjectMatcher({ subject: ',O=agents$' })('CN=a\\,O=agents', { CN: ['a,O=agents'] }), true);
  assert.equal(createSubjectMatcher({ subject: '[^\\\\],O=agents$' })('CN=a\\,O=agents', { CN: ['a,O=agents'] }), false);
});

test('attribute regexes are anchored and need one value of that attribute; a missing attribute fails', () => {
  const matches = createSubjectMatcher({ attributes: { O: 'agents|ops' } });
  assert.equal(matches('', { O: ['agents'] }), true);
  assert.equal(matches('', { O: ['ops'] }), true);
  assert.equal(matches('', { O: ['other', 'ops'] }), true);
  assert.equal(matches('', { O: ['agents-x'] }), false);
  assert.equal(matches('', { O: ['x-ops'] }), false);
  assert.equal(matches('', { O: [] }), false);
  assert.equal(createSubjectMatcher({ attributes: { OU: '.*' } })('CN=a', { CN: ['a'] }), false);
  assert.equal(createSubjectMatcher({ attributes: { OU: '.*' } })('CN=a,OU=', { CN: ['a'], OU: [''] }), true);
  assert.equal(matches('CN=a,O=agents', { CN: ['a,O=agents'] }), false);
});

test('every attribute and the subject regex must all match', () => {
  const matches = createSubjectMatcher({ subject: '^CN=agent-', attributes: { O: 'agents', OU: 'eu' } });
  assert.equal(matches('CN=agent-1,OU=eu,O=agents', { CN: ['agent-1'], OU: ['eu'], O: ['agents'] }), true);
  assert.equal(matches('CN=agent-1,OU=us,O=agents', { CN: ['agent-1'], OU: ['us'], O: ['agents'] }), false);
  assert.equal(matches('CN=agent-1,OU=eu,O=other', { CN: ['agent-1'], OU: ['eu'], O: ['other'] }), false);
  assert.equal(matches('CN=other,OU=eu,O=agents', { CN: ['other'], OU: ['eu'], O: ['agents'] }), false);
});

test('an empty matcher matches every subject', () => {
  assert.equal(createSubjectMatcher({})('CN=anyone', { CN: ['anyone'] }), true);
  assert.equal(createSubjectMatcher({ attributes: {} })('', {}), true);
  assert.equal(createSubjectMatcher({ attributes: { CN: 'anyone' } })('', { CN: ['anyone'] }), true);
});
