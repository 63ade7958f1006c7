/**
 * The Kubernetes user and group names kubectl through the gateway may impersonate (src/shared/kube-names.ts,
 * docs/kubectl.md "Identity mapping"): printable ASCII an HTTP header carries verbatim, no whitespace at either end
 * (the cluster's HTTP parser would trim it), and for a caller nothing in the cluster's `system:` namespace, read as the
 * cluster reads it — after that trimming, and case-sensitively.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { callerNameProblem, isSystemName, kubeNameProblem } from '../../src/shared/kube-names.js';

const CONTROL = 'holds a control character';
const NON_ASCII = 'holds a character outside printable ASCII, which an HTTP header cannot carry verbatim';
const WHITESPACE = "starts or ends with whitespace, which the cluster's HTTP parser trims";
const SYSTEM = "is in the cluster's reserved system: namespace";

describe('names an HTTP header carries verbatim', () => {
  test('printable ASCII names pass, spaces inside and the ends of the range included', () => {
    for (const name of ['outpost:alice', 'a', 'bob@example.com', 'CN=carol,O=team a', 'a b', '!', '~', 'a~', '!~', 'System:masters']) {
      assert.equal(kubeNameProblem(name), undefined, name);
    }
  });

  test('an empty name is refused as empty', () => {
    assert.equal(kubeNameProblem(''), 'is empty');
  });

  test('control characters are refused, the first and last of C0 and DEL included, wherever they are', () => {
    for (const name of ['a\u0000', '\u0001a', 'a\u001fb', 'a\u007f', 'a\tb', 'a\nb', 'a\rb', '\u0000', '\u001f', '\u007f']) {
      assert.equal(kubeNameProblem(name), CONTROL, JSON.stringify(name));
    }
  });

  test('characters outside printable ASCII are refused, the first one past DEL included', () => {
    for (const name of ['outpost:d\u00e9vs', 'a\u0080', '\u0080', 'a\u00a0b', 'a\u2028', '\u{1f600}', 'ﬁ']) {
      assert.equal(kubeNameProblem(name), NON_ASCII, JSON.stringify(name));
    }
  });

  test('a space at either end is refused: the cluster would read another name', () => {
    for (const name of [' a', 'a ', ' a ', ' ', ' system:masters', 'system:masters ']) {
      assert.equal(kubeNameProblem(name), WHITESPACE, JSON.stringify(name));
    }
  });

  test('a tab at either end is refused as the control character it is', () => {
    assert.equal(kubeNameProblem('\tsystem:masters'), CONTROL);
    assert.equal(kubeNameProblem('system:masters\t'), CONTROL);
  });
});

describe('the system: namespace', () => {
  test('names in it, also behind the whitespace the cluster trims', () => {
    for (const name of ['system:masters', 'system:admin', 'system:', ' system:masters', '\tsystem:masters ', 'system:serviceaccount:a:b']) {
      assert.equal(isSystemName(name), true, JSON.stringify(name));
    }
  });

  test('names outside it: another case, the prefix elsewhere in the name, a prefix of the prefix', () => {
    for (const name of [
      'System:masters',
      'SYSTEM:masters',
      'outpost:system:masters',
      'masters-system:',
      'system',
      'systemmasters',
      'outpost:alice',
    ]) {
      assert.equal(isSystemName(name), false, JSON.stringify(name));
    }
  });
});

describe("a caller's names", () => {
  test('a printable name outside system: may be impersonated', () => {
    for (const name of ['outpost:alice', 'outpost:devs', 'System:masters', 'outpost:system:masters']) {
      assert.equal(callerNameProblem(name), undefined, name);
    }
  });

  test('a system: name is refused as reserved', () => {
    assert.equal(callerNameProblem('system:masters'), SYSTEM);
    assert.equal(callerNameProblem('system:admin'), SYSTEM);
  });

  test('a name that is not carried verbatim is refused for that, before its system: reading', () => {
    assert.equal(callerNameProblem(' system:masters'), WHITESPACE);
    assert.equal(callerNameProblem('system:masters\u0000'), CONTROL);
    assert.equal(callerNameProblem('outpost:alice\u0000'), CONTROL);
    assert.equal(callerNameProblem('outpost:d\u00e9vs'), NON_ASCII);
    assert.equal(callerNameProblem('outpost:alice '), WHITESPACE);
    assert.equal(callerNameProblem(''), 'is empty');
  });
});
