/**
 * The one rule for account names (src/shared/account-name.ts): lowercase letters and digits at both ends, '-', '.'
 * and '_' inside, 253 characters at most — what every door checks (Hello, AccountsChanged, the account routes and
 * RPCs, `/k8s/{account}`) before a name keys a row, the cache or a Spinnaker credential.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isValidAccountName } from '../../src/shared/account-name.js';

describe('account names', () => {
  test('DNS-1123-like names are accepted: one character, inner -._, digits anywhere', () => {
    for (const name of ['a', '7', 'prod', 'prod-eu-1', 'team.a_b', '0a-b.c_d9', 'a--b', 'a..b', 'a__b']) {
      assert.equal(isValidAccountName(name), true, name);
    }
  });

  test('253 characters at most', () => {
    assert.equal(isValidAccountName('a'.repeat(253)), true);
    assert.equal(isValidAccountName(`a${'-'.repeat(251)}b`), true);
    assert.equal(isValidAccountName('a'.repeat(254)), false);
  });

  test('refused: empty, upper case, other characters, a separator at either end, anything around a valid name', () => {
    for (const name of [
      '',
      'Prod',
      'prod-EU',
      '-prod',
      'prod-',
      '.prod',
      'prod.',
      '_prod',
      'prod_',
      '-',
      'pr od',
      'prod/eu',
      'prod:1',
      'prod%2f',
      'prod\n',
      '\nprod',
      'prod\nother',
      'é',
      'prod\u0000',
      '../prod',
    ]) {
      assert.equal(isValidAccountName(name), false, JSON.stringify(name));
    }
  });
});
